import { isLate } from '@duplex-bench/pacer';
import { createUsHistogram, decodeHistogram, mergeHistograms, percentilesMs, recordMs, type PercentilesMs } from './histogram';
import { peakOverlap } from './overlap';
import type { SamplesFile } from './samples';

export interface MergedPacing {
  processes: number;
  packet_ms: number;
  sessions_streamed: number;
  sessions_with_violation: number;
  packets: { sent: number; late: number };
  pacing_deviation_ms: PercentilesMs;
  /** Of the packets sent after each process's warm-up, when the processes had one (`steady_from_s`). */
  pacing_deviation_steady_ms?: PercentilesMs;
  pacing_deviation_signed_ms: { min: number | null; max: number | null };
  websocket_send_ms: PercentilesMs;
  append_span_ms: PercentilesMs;
  /** Most input streams open at one instant across all processes (they share the host's monotonic clock). */
  peak_overlapping_streams: number;
  /** Times of late packets, seconds on the shared clock, for lining processes up. */
  late_times_s: number[];
}

/**
 * Pools the packets of processes that streamed at the same time on one host. Percentiles come from
 * the processes' HDR histograms merged from their encoded form, which is the same as recording every
 * packet into one histogram; counts come from the raw samples. Never an average of percentiles.
 */
export function mergeSamples(files: SamplesFile[], steady_from_s: ReadonlyArray<number | undefined> = []): MergedPacing {
  if (files.length === 0) throw new RangeError('nothing to merge');
  const packet_ms = files[0].packet_ms;
  for (const f of files) {
    if (f.packet_ms !== packet_ms) throw new RangeError(`cannot merge runs with ${packet_ms} ms and ${f.packet_ms} ms packets`);
  }
  let sent = 0;
  let late = 0;
  let withViolation = 0;
  let streamed = 0;
  let min = Infinity;
  let max = -Infinity;
  const late_times_s: number[] = [];
  const intervals: Array<[number, number]> = [];
  // Steady state from the raw samples: each process's packets sent after its own warm-up ended.
  const steady = steady_from_s.some((t) => t !== undefined) ? createUsHistogram() : null;
  for (const [fi, f] of files.entries()) {
    const from_s = steady_from_s[fi];
    for (const s of f.sessions) {
      const n = s.deviation_ms.length;
      if (n === 0) continue;
      streamed++;
      intervals.push([s.start_s[0], s.start_s[n - 1] + packet_ms / 1000]);
      let violated = false;
      for (let i = 0; i < n; i++) {
        const d = s.deviation_ms[i];
        if (steady && from_s !== undefined && s.start_s[i] >= from_s) recordMs(steady, Math.abs(d));
        if (d < min) min = d;
        if (d > max) max = d;
        if (isLate(d, packet_ms)) {
          late++;
          violated = true;
          late_times_s.push(s.start_s[i]);
        }
      }
      sent += n;
      if (violated) withViolation++;
    }
  }
  const pooled = (key: 'deviation' | 'send' | 'append_span') => percentilesMs(mergeHistograms(files.map((f) => decodeHistogram(f.histograms[key]))));
  const round = (v: number) => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);
  return {
    processes: files.length,
    packet_ms,
    sessions_streamed: streamed,
    sessions_with_violation: withViolation,
    packets: { sent, late },
    pacing_deviation_ms: pooled('deviation'),
    ...(steady ? { pacing_deviation_steady_ms: percentilesMs(steady) } : {}),
    pacing_deviation_signed_ms: { min: round(min), max: round(max) },
    websocket_send_ms: pooled('send'),
    append_span_ms: pooled('append_span'),
    peak_overlapping_streams: peakOverlap(intervals),
    late_times_s: late_times_s.sort((a, b) => a - b),
  };
}
