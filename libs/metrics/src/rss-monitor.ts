import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';

export interface RssFigures {
  /** Resident set size at the last sample, MiB. */
  now_mib: number | null;
  /** The most of the samples, MiB (the kernel's maxrss, which also counts the start-up, is `peak_rss_bytes`). */
  peak_mib: number | null;
  /** Least-squares slope of RSS over time from `from_s` on, MiB per minute; null before two samples 10 s apart. */
  growth_mib_per_min: number | null;
  /**
   * The same slope over the second half of those samples (from the 10 s bin at their midpoint on),
   * MiB per minute: growth that goes on shows in both figures; a rise that levels off (the
   * allocator and the heap settling) only in growth_mib_per_min. Null over less than 10 s.
   */
  late_growth_mib_per_min: number | null;
  /** Seconds after the monitor's start from which the late slope counts. */
  late_from_s: number | null;
  /** Samples the slope was fitted to, and the seconds they span. */
  samples: number;
  span_s: number;
  /** Seconds after the monitor's start from which samples count (through the warm-up). */
  from_s: number;
  /** Seconds after the monitor's start after which samples no longer count (the load's end: a run's drain frees memory), when set. */
  until_s: number | null;
  /**
   * With a load watched (`watchLoad`: sessions or requests in flight, read at each sample): its
   * most so far at the first counted sample and at the last. Memory kept for the most in flight at
   * once is reused, not given back, so RSS follows this high-water mark up; a rise of it after
   * `from_s` is growth that the offered traffic made, not a leak.
   */
  in_flight_peak_at_from?: number | null;
  in_flight_peak?: number | null;
  /** Seconds after the monitor's start from which the held slope counts: the 10 s bin after the last sample that raised the peak (`from_s` if none did). */
  held_from_s?: number | null;
  /** The same slope over the samples from `held_from_s` on, while the load's high-water mark held: memory that grows there grows with time, not with load. Null over less than 10 s. */
  held_growth_mib_per_min?: number | null;
}

const MIB = 2 ** 20;
/** A slope over less than this is noise from one garbage collection, not growth. */
const MIN_SPAN_S = 10;
/** The late slope's samples are kept as sums per bin of this many seconds (an hour: 360 bins). */
const BIN_S = 10;

/** Running sums of a least-squares fit of RSS (MiB) against time (minutes from the first sample). */
class Fit {
  n = 0;
  st = 0;
  sr = 0;
  stt = 0;
  str = 0;

  add(x: number, mib: number): void {
    this.n++;
    this.st += x;
    this.sr += mib;
    this.stt += x * x;
    this.str += x * mib;
  }

  join(f: Fit): void {
    this.n += f.n;
    this.st += f.st;
    this.sr += f.sr;
    this.stt += f.stt;
    this.str += f.str;
  }

  /** MiB per minute; null with fewer than two samples. */
  slope(): number | null {
    const d = this.n * this.stt - this.st * this.st;
    return this.n >= 2 && d > 0 ? (this.n * this.str - this.st * this.sr) / d : null;
  }
}

/**
 * This process's resident set size, sampled every `interval_ms` (one read of its own stat, no
 * allocation), and its growth: the least-squares slope of the samples after `from_s`, kept as five
 * running sums (and the same five per 10 s bin, for the slope of the second half), so a run of
 * hours holds a few kilobytes.
 */
export class RssMonitor {
  private cancel: (() => void) | null = null;
  private all = new Fit();
  /** The same sums per BIN_S of samples, from the first: the late slope joins those from the midpoint on. */
  private bins: Fit[] = [];
  private first_s = NaN;
  private last_s = NaN;
  private now = NaN;
  private peak = NaN;
  private until_s = Infinity;
  private load: (() => number) | null = null;
  private loadPeak = -Infinity;
  private loadPeakAtFrom = NaN;
  /** Seconds after the first counted sample of the last counted sample that raised the load's peak; −1: none did. */
  private raised_s = -1;
  readonly origin_s: number;

  constructor(
    /** Samples count from this many seconds after the start. */
    private from_s = 0,
    private readonly interval_ms = 1000,
    private readonly timers: TimerHost = nodeTimerHost,
    /** Where the RSS is read (bytes); a test's own. */
    private readonly read: () => number = () => process.memoryUsage.rss(),
  ) {
    this.origin_s = timers.now_s();
  }

  /** The last sample, MiB; null before the first. */
  get now_mib(): number | null {
    return Number.isNaN(this.now) ? null : this.now;
  }

  /** Samples count from clock second `t_s` on (the start gate plus the warm-up). */
  countFrom(t_s: number): void {
    this.from_s = Math.max(0, t_s - this.origin_s);
    // Samples already taken before that instant are the start-up's, not the run's.
    this.all = new Fit();
    this.bins = [];
    this.raised_s = -1;
  }

  /** Where the load in flight (sessions, requests) is read at each sample, for the peak figures. */
  watchLoad(read: () => number): void {
    this.load = read;
  }

  /** Samples after clock second `t_s` do not count in the growth (the load ends there; the drain that follows frees memory). */
  countUntil(t_s: number): void {
    this.until_s = t_s - this.origin_s;
  }

  start(): this {
    this.sample();
    const next = () => {
      this.cancel = this.timers.arm(this.interval_ms, () => {
        this.sample();
        next();
      }, { background: true });
    };
    next();
    return this;
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  /** Takes one sample now (the monitor's timer does, each interval). */
  sample(): void {
    const mib = this.read() / MIB;
    this.now = mib;
    if (!(mib <= this.peak)) this.peak = mib;
    const t = this.timers.now_s() - this.origin_s;
    if (t > this.until_s) return;
    const load = this.load?.() ?? -Infinity;
    const raised = load > this.loadPeak;
    if (raised) this.loadPeak = load;
    if (t < this.from_s) return;
    if (this.all.n === 0) {
      this.first_s = t;
      this.loadPeakAtFrom = this.loadPeak;
    } else if (raised) this.raised_s = t - this.first_s;
    this.last_s = t;
    // Centred on the first sample so the sums stay small over hours.
    const x = (t - this.first_s) / 60;
    this.all.add(x, mib);
    const bin = Math.floor((t - this.first_s) / BIN_S);
    while (this.bins.length <= bin) this.bins.push(new Fit());
    this.bins[bin].add(x, mib);
  }

  figures(): RssFigures {
    const span_s = this.all.n > 0 ? this.last_s - this.first_s : 0;
    const slope = span_s >= MIN_SPAN_S ? this.all.slope() : null;
    // The second half: the bins from the one holding the midpoint on.
    const from_bin = Math.floor(span_s / 2 / BIN_S);
    const late = new Fit();
    for (let b = from_bin; b < this.bins.length; b++) late.join(this.bins[b]);
    const late_span_s = span_s - from_bin * BIN_S;
    const late_slope = late_span_s >= MIN_SPAN_S ? late.slope() : null;
    // While the high-water mark held: the bins after the one holding the last sample that raised it.
    const held_bin = this.raised_s < 0 ? 0 : Math.floor(this.raised_s / BIN_S) + 1;
    const held = new Fit();
    for (let b = held_bin; b < this.bins.length; b++) held.join(this.bins[b]);
    const held_span_s = span_s - held_bin * BIN_S;
    const held_slope = held_span_s >= MIN_SPAN_S ? held.slope() : null;
    const r2 = (v: number) => Math.round(v * 100) / 100;
    const r3 = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
    return {
      now_mib: Number.isNaN(this.now) ? null : r2(this.now),
      peak_mib: Number.isNaN(this.peak) ? null : r2(this.peak),
      growth_mib_per_min: r3(slope),
      late_growth_mib_per_min: r3(late_slope),
      late_from_s: late_slope === null ? null : Math.round((this.first_s + from_bin * BIN_S) * 10) / 10,
      samples: this.all.n,
      span_s: Math.round(span_s * 10) / 10,
      from_s: Math.round(this.from_s * 10) / 10,
      until_s: Number.isFinite(this.until_s) ? Math.round(this.until_s * 10) / 10 : null,
      ...(this.load
        ? {
            in_flight_peak_at_from: Number.isFinite(this.loadPeakAtFrom) ? this.loadPeakAtFrom : null,
            in_flight_peak: Number.isFinite(this.loadPeak) && this.all.n > 0 ? this.loadPeak : null,
            held_from_s: held_slope === null ? null : Math.round((this.first_s + held_bin * BIN_S) * 10) / 10,
            held_growth_mib_per_min: r3(held_slope),
          }
        : {}),
    };
  }
}
