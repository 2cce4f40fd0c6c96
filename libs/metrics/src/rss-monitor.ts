import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';

export interface RssFigures {
  /** Resident set size at the last sample, MiB. */
  now_mib: number | null;
  /** The most of the samples, MiB (the kernel's maxrss, which also counts the start-up, is `peak_rss_bytes`). */
  peak_mib: number | null;
  /** Least-squares slope of RSS over time from `from_s` on, MiB per minute; null before two samples 10 s apart. */
  growth_mib_per_min: number | null;
  /** Samples the slope was fitted to, and the seconds they span. */
  samples: number;
  span_s: number;
  /** Seconds after the monitor's start from which samples count (through the warm-up). */
  from_s: number;
  /** Seconds after the monitor's start after which samples no longer count (the load's end: a run's drain frees memory), when set. */
  until_s: number | null;
}

const MIB = 2 ** 20;
/** A slope over less than this is noise from one garbage collection, not growth. */
const MIN_SPAN_S = 10;

/**
 * This process's resident set size, sampled every `interval_ms` (one read of its own stat, no
 * allocation), and its growth: the least-squares slope of the samples after `from_s`, kept as five
 * running sums, so a run of hours holds no more than a minute's.
 */
export class RssMonitor {
  private cancel: (() => void) | null = null;
  private n = 0;
  private st = 0;
  private sr = 0;
  private stt = 0;
  private str = 0;
  private first_s = NaN;
  private last_s = NaN;
  private now = NaN;
  private peak = NaN;
  private until_s = Infinity;
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
    this.n = this.st = this.sr = this.stt = this.str = 0;
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
    if (t < this.from_s || t > this.until_s) return;
    if (this.n === 0) this.first_s = t;
    this.last_s = t;
    // Centred on the first sample so the sums stay small over hours.
    const x = (t - this.first_s) / 60;
    this.n++;
    this.st += x;
    this.sr += mib;
    this.stt += x * x;
    this.str += x * mib;
  }

  figures(): RssFigures {
    const span_s = this.n > 0 ? this.last_s - this.first_s : 0;
    const d = this.n * this.stt - this.st * this.st;
    const slope = this.n >= 2 && span_s >= MIN_SPAN_S && d > 0 ? (this.n * this.str - this.st * this.sr) / d : null;
    const r2 = (v: number) => Math.round(v * 100) / 100;
    return {
      now_mib: Number.isNaN(this.now) ? null : r2(this.now),
      peak_mib: Number.isNaN(this.peak) ? null : r2(this.peak),
      growth_mib_per_min: slope === null ? null : Math.round(slope * 1000) / 1000,
      samples: this.n,
      span_s: Math.round(span_s * 10) / 10,
      from_s: Math.round(this.from_s * 10) / 10,
      until_s: Number.isFinite(this.until_s) ? Math.round(this.until_s * 10) / 10 : null,
    };
  }
}
