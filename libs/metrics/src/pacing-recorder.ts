import { deviationMs, isLate } from '@duplex-bench/pacer';
import { createUsHistogram, percentilesMs, recordMs, type Histogram, type PercentilesMs } from './histogram';

/** The times of one sent packet (seconds, monotonic clock). */
export interface PacketTimes {
  seq: number;
  scheduled_s: number;
  start_s: number;
  completed_s: number;
  send_ms: number;
  buffered_bytes: number;
}

export interface PacingFigures {
  packets: { sent: number; late: number };
  pacing_deviation_ms: PercentilesMs;
  pacing_deviation_signed_ms: { min: number | null; max: number | null };
  websocket_send_ms: PercentilesMs;
  append_span_ms: PercentilesMs;
  buffered_amount_peak_bytes: number;
}

/** Histograms of one process's packets: |deviation|, ws.send duration, append span. */
export class PacingRecorder {
  readonly deviation = createUsHistogram();
  /** Deviations of packets sent after the warm-up, for steady-state percentiles. */
  readonly steadyDeviation = createUsHistogram();
  readonly send = createUsHistogram();
  readonly appendSpan = createUsHistogram();
  sent = 0;
  late = 0;
  signedMin = Infinity;
  signedMax = -Infinity;
  bufferedPeak = 0;

  constructor(
    readonly packet_ms: number,
    /** Packets whose send start is before this are warm-up. */
    private steady_from_s = -Infinity,
  ) {}

  /** Sets when the warm-up ends (known only once the start gate is). */
  setSteadyFrom(t_s: number): void {
    this.steady_from_s = t_s;
  }

  /** Records one packet of a session whose packet 0 started at `origin_s`; returns whether it was late. */
  record(p: PacketTimes, origin_s: number): boolean {
    const dev_ms = deviationMs(p.start_s, origin_s, p.seq, this.packet_ms);
    const abs_ms = Math.abs(dev_ms);
    recordMs(this.deviation, abs_ms);
    if (p.start_s >= this.steady_from_s) recordMs(this.steadyDeviation, abs_ms);
    recordMs(this.send, p.send_ms);
    recordMs(this.appendSpan, Math.max(0, (p.completed_s - p.scheduled_s) * 1000));
    if (dev_ms < this.signedMin) this.signedMin = dev_ms;
    if (dev_ms > this.signedMax) this.signedMax = dev_ms;
    if (p.buffered_bytes > this.bufferedPeak) this.bufferedPeak = p.buffered_bytes;
    this.sent++;
    const late = isLate(dev_ms, this.packet_ms);
    if (late) this.late++;
    return late;
  }

  figures(): PacingFigures {
    return summarizePacing(this.deviation, this.send, this.appendSpan, {
      sent: this.sent,
      late: this.late,
      signedMin: this.signedMin,
      signedMax: this.signedMax,
      bufferedPeak: this.bufferedPeak,
    });
  }
}

export function summarizePacing(
  deviation: Histogram,
  send: Histogram,
  appendSpan: Histogram,
  counts: { sent: number; late: number; signedMin: number; signedMax: number; bufferedPeak: number },
): PacingFigures {
  const round = (v: number) => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);
  return {
    packets: { sent: counts.sent, late: counts.late },
    pacing_deviation_ms: percentilesMs(deviation),
    pacing_deviation_signed_ms: { min: round(counts.signedMin), max: round(counts.signedMax) },
    websocket_send_ms: percentilesMs(send),
    append_span_ms: percentilesMs(appendSpan),
    buffered_amount_peak_bytes: counts.bufferedPeak,
  };
}
