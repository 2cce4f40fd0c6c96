import { createUsHistogram, recordMs, type Histogram } from './histogram';

/**
 * Per-unit figures of a native server (sglang-omni, benchmarks/duplex/serving_unit_metrics.py@20e09f84
 * as serving.py@88ad7b44 uses it): a unit's lag runs from the send completion of the append that holds
 * the unit's last input sample (its input is then complete on the wire) to the receipt of its
 * `sglang.unit.done`. Units are matched to `unit.done` events in arrival order, as theirs are.
 */
export interface UnitLagMs {
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
}

/** `ms_per_unit` of a lockstep run: the same per-unit measure, with the percentiles the other lockstep figures use. */
export interface UnitStepMs {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

/** Unit counts of one process (or several, summed). */
export interface UnitCounts {
  /** The server's unit (`native_unit_ms` of its grant); the miss threshold is one unit. */
  unit_ms: number;
  /**
   * Units the sessions' input holds, ceil(input / unit), whether or not the client got to send them
   * (the short last unit included; the empty end-of-input unit not): sglang-omni's
   * `expected_units` (serving_unit_metrics.py@20e09f84).
   */
  expected: number;
  /** Of those, units whose `sglang.unit.done` arrived. */
  done: number;
  /** Units whose lag exceeded one unit, plus expected units that never got their `unit.done` (unsent ones among them). */
  missed: number;
  /** `unit.done` events that came before the client had sent the unit's input (a server fault; no lag recorded). */
  done_before_input: number;
}

const roundUs = (us: number): number => Math.round(us) / 1000;

function at(h: Histogram, p: number): number {
  // A percentile reads the top of its bucket, which can pass the exact max: clamp to it.
  return roundUs(Math.min(h.getValueAtPercentile(p), h.maxValue));
}

export function unitLagMs(h: Histogram): UnitLagMs {
  if (h.totalCount === 0) return { count: 0, p50: null, p95: null, p99: null, max: null };
  return { count: h.totalCount, p50: at(h, 50), p95: at(h, 95), p99: at(h, 99), max: roundUs(h.maxValue) };
}

export function unitStepMs(h: Histogram): UnitStepMs {
  if (h.totalCount === 0) return { count: 0, p50: null, p90: null, p99: null, max: null };
  return { count: h.totalCount, p50: at(h, 50), p90: at(h, 90), p99: at(h, 99), max: roundUs(h.maxValue) };
}

/** Missed over expected; null when no unit was expected. */
export function unitMissRate(c: Pick<UnitCounts, 'expected' | 'missed'>): number | null {
  return c.expected > 0 ? Math.round((c.missed / c.expected) * 1e6) / 1e6 : null;
}

/** The unit figures of one process's sessions: one lag histogram (µs) and the counts, pooled. */
export class UnitLagRecorder {
  readonly lag = createUsHistogram();
  unit_ms = 0;
  expected = 0;
  done = 0;
  missed = 0;
  done_before_input = 0;
  /** Units per second of each session that finished a unit: units done over first append send start to the last unit's `unit.done`. */
  readonly units_per_s: number[] = [];

  /** A session's tracker, for a server unit of `unit_ms` and `input_ms` of input to send. */
  session(unit_ms: number, input_ms: number): SessionUnits {
    this.unit_ms = unit_ms;
    return new SessionUnits(this, unit_ms, input_ms);
  }

  counts(): UnitCounts {
    return { unit_ms: this.unit_ms, expected: this.expected, done: this.done, missed: this.missed, done_before_input: this.done_before_input };
  }
}

/** Units whose end lies within this much of the input sent count as complete (ms from bytes are exact; unit sums are not). */
const END_SLACK_MS = 1e-6;

/** One session's units: when each unit's input was complete, and the lag of each `unit.done`. */
export class SessionUnits {
  private units: number;
  /**
   * When each unit's input was complete, for the units sent and not yet done (`doneCount` to
   * `ready`): a ring, unit k at `k & (length - 1)`, doubled when more are in flight. An array of the
   * whole input's units grew a session 8 bytes a unit as its pages were touched: an hour at 512
   * sessions, 2-3 MiB a minute.
   */
  private ready_s = new Float64Array(64);
  private ready = 0;
  private doneCount = 0;
  private first_start_s = NaN;
  private last_done_s = NaN;
  /** Send return of the last append: a short last unit is complete with it when the input ends early. */
  private last_completed_s = NaN;
  private finished = false;

  constructor(
    private readonly recorder: UnitLagRecorder,
    readonly unit_ms: number,
    private input_ms: number,
  ) {
    this.units = Math.ceil(input_ms / unit_ms - END_SLACK_MS / unit_ms);
  }

  /** Unit `k`'s input was complete at `t_s`. */
  private setReady(k: number, t_s: number): void {
    if (k - this.doneCount >= this.ready_s.length) {
      const grown = new Float64Array(this.ready_s.length * 2);
      for (let j = Math.max(this.doneCount, 0); j < k; j++) grown[j & (grown.length - 1)] = this.ready_s[j & (this.ready_s.length - 1)];
      this.ready_s = grown;
    }
    this.ready_s[k & (this.ready_s.length - 1)] = t_s;
  }

  /** Units the whole input holds: the last one may be short. */
  get total(): number {
    return this.units;
  }

  /** `unit.done` events received so far. */
  get done(): number {
    return this.doneCount;
  }

  /** An append went: it started at `start_s`, ends the input at `end_ms`, and its `ws.send()` returned at `completed_s`. */
  inputSent(start_s: number, end_ms: number, completed_s: number): void {
    if (this.ready === 0 && Number.isNaN(this.first_start_s)) this.first_start_s = start_s;
    this.last_completed_s = completed_s;
    const { unit_ms, input_ms, total } = this;
    while (this.ready < total && Math.min((this.ready + 1) * unit_ms, input_ms) <= end_ms + END_SLACK_MS) this.setReady(this.ready++, completed_s);
  }

  /**
   * The input ended after `end_ms` sent, short of the length the session was given (a conversation
   * played once ends where its script does): its units are those of the input sent, a short last
   * one complete with the last append. The rest never were input: neither expected nor missed.
   */
  inputEnded(end_ms: number): void {
    if (end_ms >= this.input_ms) return;
    this.input_ms = end_ms;
    this.units = Math.ceil(end_ms / this.unit_ms - END_SLACK_MS / this.unit_ms);
    while (this.ready < this.units) this.setReady(this.ready++, this.last_completed_s);
  }

  /** A `sglang.unit.done` arrived at `received_s`. */
  unitDone(received_s: number): void {
    const k = this.doneCount++;
    // The empty unit a server sends where input ends on a unit boundary carries no input: no lag.
    if (k >= this.total) return;
    this.last_done_s = received_s;
    const r = this.recorder;
    if (k >= this.ready) {
      r.done_before_input++;
      return;
    }
    const lag_ms = (received_s - this.ready_s[k & (this.ready_s.length - 1)]) * 1000;
    recordMs(r.lag, lag_ms > 0 ? lag_ms : 0);
    if (lag_ms > this.unit_ms) r.missed++;
  }

  /**
   * The session ended: its counts join the process's. Every unit of its input is expected, sent or
   * not, and each that never got its `unit.done` is missed: a session cut short misses the rest of
   * its input, as sglang-omni's serving metrics count it.
   */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    const r = this.recorder;
    const done = Math.min(this.doneCount, this.ready);
    r.expected += this.total;
    r.done += done;
    r.missed += this.total - done;
    if (done > 0 && this.last_done_s > this.first_start_s) r.units_per_s.push(Math.round((done / (this.last_done_s - this.first_start_s)) * 1000) / 1000);
  }
}

/** The lockstep throughput of a run: each session's units per second, and their sum (sglang-omni's `total_units_per_s`). */
export interface UnitsPerSecond {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  min: number | null;
  max: number | null;
  per_session: number[];
}

export function unitsPerSecond(per_session: number[]): { units_per_s: UnitsPerSecond; units_per_s_total: number } {
  const sorted = [...per_session].sort((a, b) => a - b);
  const n = sorted.length;
  const round = (v: number) => Math.round(v * 1000) / 1000;
  // Nearest rank: a session count is small, and a reader can check it against per_session.
  const rank = (p: number) => (n === 0 ? null : sorted[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]);
  const total = round(sorted.reduce((a, v) => a + v, 0));
  return {
    units_per_s: { count: n, mean: n === 0 ? null : round(total / n), p50: rank(50), p90: rank(90), min: n === 0 ? null : sorted[0], max: n === 0 ? null : sorted[n - 1], per_session },
    units_per_s_total: total,
  };
}
