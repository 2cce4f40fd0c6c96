import type { CpuFigures, GcFigures, LoopLagFigures, PacingFigures, PercentilesMs } from '@duplex-bench/metrics';
import type { DeadlineSchedulerStats } from '@duplex-bench/pacer';
import type { TraceWriterStats } from '@duplex-bench/tracer';
import type { SessionResult } from './session';

export interface RunSummary extends PacingFigures {
  qualified: boolean;
  interrupted: boolean;
  sessions: {
    started: number;
    completed: number;
    incomplete: number;
    with_violation: number;
    incomplete_reasons: Record<string, number>;
  };
  pacing_deviation_steady_ms?: PercentilesMs;
  warmup_s: number;
  event_loop_lag_ms: LoopLagFigures;
  gc_pause_ms: GcFigures;
  cpu_cores: CpuFigures;
  peak_rss_bytes: number;
  peak_overlapping_streams: number;
  trace_backlog_peak_bytes: number;
  trace: TraceWriterStats;
  scheduler: DeadlineSchedulerStats;
  events: { server_errors: number; unknown: Record<string, number> };
  packet_ms: number;
  duration_s: number;
  measurement_origin: Record<string, string>;
}

export interface SummaryInputs {
  results: SessionResult[];
  pacing: PacingFigures;
  steady?: PercentilesMs;
  warmup_s: number;
  loop: LoopLagFigures;
  gc: GcFigures;
  cpu: CpuFigures;
  peak_rss_bytes: number;
  peak_overlapping_streams: number;
  scheduler: DeadlineSchedulerStats;
  unknown: Map<string, number>;
  interrupted: boolean;
  trace: TraceWriterStats;
  packet_ms: number;
  duration_s: number;
}

export const MEASUREMENT_ORIGIN: Record<string, string> = {
  pacing_deviation_ms: 'client: |send start of packet N minus (send start of packet 0 + N x packet_ms)|; send start taken before serialization and ws.send()',
  pacing_deviation_signed_ms: 'client: send start of packet N minus (send start of packet 0 + N x packet_ms)',
  pacing_deviation_steady_ms: 'as pacing_deviation_ms, packets sent at least warmup_s after the start gate',
  websocket_send_ms: 'client: duration of the ws.send() call for each append',
  append_span_ms: 'client: tick due (origin + N x packet_ms) to ws.send() returned',
  buffered_amount_peak_bytes: 'client: largest socket bufferedAmount right after an append',
  event_loop_lag_ms: 'client process: lateness of a 10 ms timer',
  gc_pause_ms: 'client process: perf_hooks gc entries',
  cpu_cores: 'client process: CPU seconds per wall second over the run',
  peak_rss_bytes: 'client process: kernel maxrss',
  peak_overlapping_streams: 'client: most sessions between their first and last append at one instant',
  scheduler: 'client: shared deadline timer; max_lateness_ms is timer fire minus deadline',
  trace_backlog_peak_bytes: 'client: largest amount of trace and receipt data handed to the writer thread and not yet written',
  trace: 'client writer thread: batches, bytes written, longest batch write (ms)',
};

/** The summary of one run, with DESIGN.md's field names. Pure: same inputs, same summary. */
export function buildSummary(i: SummaryInputs): RunSummary {
  const reasons: Record<string, number> = {};
  let completed = 0;
  let with_violation = 0;
  let server_errors = 0;
  for (const r of i.results) {
    if (r.completed) completed++;
    else if (r.reason) reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
    if (r.violation) with_violation++;
    server_errors += r.server_errors;
  }
  const summary: RunSummary = {
    // An interrupted run is partial: never a qualified measurement, whatever its packets did.
    qualified: !i.interrupted && i.pacing.packets.late === 0 && i.pacing.packets.sent > 0,
    interrupted: i.interrupted,
    sessions: {
      started: i.results.length,
      completed,
      incomplete: i.results.length - completed,
      with_violation,
      incomplete_reasons: reasons,
    },
    ...i.pacing,
    warmup_s: i.warmup_s,
    event_loop_lag_ms: i.loop,
    gc_pause_ms: i.gc,
    cpu_cores: i.cpu,
    peak_rss_bytes: i.peak_rss_bytes,
    peak_overlapping_streams: i.peak_overlapping_streams,
    trace_backlog_peak_bytes: i.trace.backlog_peak_bytes,
    trace: i.trace,
    scheduler: i.scheduler,
    events: { server_errors, unknown: Object.fromEntries(i.unknown) },
    packet_ms: i.packet_ms,
    duration_s: i.duration_s,
    measurement_origin: MEASUREMENT_ORIGIN,
  };
  if (i.warmup_s > 0 && i.steady) summary.pacing_deviation_steady_ms = i.steady;
  return summary;
}
