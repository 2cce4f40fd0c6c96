import { stat, type CpuFigures, type GcFigures, type LoopLagFigures, type PacingFigures, type PercentilesMs, type Stat } from '@duplex-bench/metrics';
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
  events: {
    server_errors: number;
    /** Server `error` events by code (`error.code`, else `error.type`), over every session. */
    server_error_codes?: Record<string, number>;
    unknown: Record<string, number>;
    /** vLLM-Omni's own events over every session: listen decisions, resyncs asked, expiries, playback acknowledgements. */
    dialect?: Record<string, number>;
    /** vLLM-Omni `server_event_seq`, over the sessions whose server numbered its events. */
    server_event_seq?: { sessions: number; gaps: number; missing_events: number; not_rising: number };
  };
  packet_ms: number;
  duration_s: number;
  measurement_origin: Record<string, string>;
  /** Present when the server answered with model turns (response.created … response.done). */
  duplex?: DuplexAggregate;
}

export interface DuplexAggregate {
  sessions: number;
  responses: number;
  ttft_ms: Stat;
  ttfp_ms: Stat;
  rtf: Stat;
  tpot_ms: Stat;
  /** When the server sent its own TTFT/TTFP: the client's figures, from response.created received. */
  client_ttft_ms?: Stat;
  client_ttfp_ms?: Stat;
  duplex_stream_ttft_ms: Stat;
  duplex_stream_ttfp_ms: Stat;
  duplex_stream_rtf: Stat;
  output_gap_max_ms: Stat;
  drift_max_ms: Stat;
  playback_underruns: number;
  measurement_origin: Record<string, string>;
}

/** The distinct origins a pooled figure draws on, joined. */
function originsOf(origins: string[]): string {
  return [...new Set(origins)].join(' or ');
}

/**
 * Response figures of a run: per response pooled over every session, and the sessions' stream
 * windows. Returns the summary's aggregate and the per-session file, or null without responses.
 */
export function duplexMetrics(
  results: Array<Pick<SessionResult, 'id' | 'responses' | 'response_metrics'>>,
): { aggregate: DuplexAggregate; file: Record<string, unknown> } | null {
  const answered = results.filter((r) => r.response_metrics);
  if (answered.length === 0) return null;
  const responses = answered.flatMap((r) => r.responses ?? []);
  const stream = answered.map((r) => r.response_metrics as NonNullable<SessionResult['response_metrics']>);
  const origins = [...new Set(responses.map((r) => r.origin))].join(' or ');
  const aggregate: DuplexAggregate = {
    sessions: answered.length,
    responses: responses.length,
    ttft_ms: stat(responses.map((r) => r.ttft_ms)),
    ttfp_ms: stat(responses.map((r) => r.ttfp_ms)),
    rtf: stat(responses.map((r) => r.rtf)),
    tpot_ms: stat(responses.map((r) => r.tpot_ms)),
    duplex_stream_ttft_ms: stat(stream.map((m) => m.stream_ttft_ms)),
    duplex_stream_ttfp_ms: stat(stream.map((m) => m.stream_ttfp_ms)),
    duplex_stream_rtf: stat(stream.map((m) => m.stream_rtf)),
    output_gap_max_ms: stat(stream.map((m) => m.output_gap_max_ms)),
    drift_max_ms: stat(stream.map((m) => m.drift_max_ms)),
    playback_underruns: stream.reduce((n, m) => n + m.playback_underruns, 0),
    measurement_origin: {
      ttft_ms: `response origin (${origins}) to first non-empty text or transcript delta received`,
      ttfp_ms: `response origin (${origins}) to first audio delta received`,
      rtf: `response.created received to last audio delta received, over the response audio duration (${originsOf(responses.map((r) => r.audio_duration_origin))})`,
      tpot_ms: originsOf(responses.filter((r) => r.tpot_ms !== null).map((r) => r.tpot_origin)) || 'absent: no token counts and no server stage metrics',
      duplex_stream: 'input stream start (send of packet 0) to first text / first audio / last audio over all emitted audio; includes concurrent realtime input',
      output_gap_max_ms: 'per session: longest wait between two audio deltas of one response (client receive times); stats over sessions',
      drift_max_ms: 'per session: largest lag of received audio behind real-time playback within a response; stats over sessions',
      playback_underruns: 'simulated player per response (80 ms prebuffer) running dry, summed over sessions',
    },
  };
  if (responses.some((r) => r.origin === 'server response_request_metrics')) {
    aggregate.client_ttft_ms = stat(responses.map((r) => (r.client_ttft_ms === undefined ? r.ttft_ms : r.client_ttft_ms)));
    aggregate.client_ttfp_ms = stat(responses.map((r) => (r.client_ttfp_ms === undefined ? r.ttfp_ms : r.client_ttfp_ms)));
    const said = responses.find((r) => r.server_measurement_origin)?.server_measurement_origin;
    aggregate.measurement_origin.server_response_request_metrics = `server clock, from its own request start${said ? `: ${JSON.stringify(said)}` : ''}; not comparable with client figures`;
    aggregate.measurement_origin.client_ttft_ms = 'response.created received to first non-empty text or transcript delta received';
    aggregate.measurement_origin.client_ttfp_ms = 'response.created received to first audio delta received';
  }
  const file = {
    ...aggregate,
    duplex_session_metrics: answered.map((r) => ({ session_id: r.id, ...r.response_metrics, responses: r.responses })),
  };
  return { aggregate, file };
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
  const server_error_codes: Record<string, number> = {};
  let dialect: Record<string, number> | undefined;
  let stamped: NonNullable<RunSummary['events']['server_event_seq']> | undefined;
  for (const r of i.results) {
    if (r.server_event_seq) {
      stamped ??= { sessions: 0, gaps: 0, missing_events: 0, not_rising: 0 };
      stamped.sessions++;
      stamped.gaps += r.server_event_seq.gaps;
      stamped.missing_events += r.server_event_seq.missing_events;
      stamped.not_rising += r.server_event_seq.not_rising;
    }
    if (r.completed) completed++;
    else if (r.reason) reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
    if (r.violation) with_violation++;
    server_errors += r.server_errors;
    for (const [code, n] of Object.entries(r.server_error_codes ?? {})) server_error_codes[code] = (server_error_codes[code] ?? 0) + n;
    if (r.dialect_events) {
      dialect ??= {};
      for (const [k, n] of Object.entries(r.dialect_events)) dialect[k] = (dialect[k] ?? 0) + n;
    }
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
    events: { server_errors, server_error_codes, unknown: Object.fromEntries(i.unknown), ...(dialect ? { dialect } : {}), ...(stamped ? { server_event_seq: stamped } : {}) },
    packet_ms: i.packet_ms,
    duration_s: i.duration_s,
    measurement_origin: MEASUREMENT_ORIGIN,
  };
  if (i.warmup_s > 0 && i.steady) summary.pacing_deviation_steady_ms = i.steady;
  return summary;
}
