import { PerformanceObserver } from 'node:perf_hooks';
import { monotonicClock, nodeTimerHost, type Clock, type TimerHost } from '@duplex-bench/pacer';
import { createUsHistogram, percentilesMs, recordMs } from './histogram';

export interface LoopLagFigures {
  p50: number | null;
  p99: number | null;
  max: number | null;
  over_80ms: number;
  samples: number;
}

/**
 * Event-loop lag from a 10 ms timer: each wake records how much later than 10 ms after the
 * previous one it came. A lag over 80 ms is a stall long enough to make a packet late.
 */
/** A loop stall worth explaining: the timer woke this late (ms) at `end_s`. */
export const STALL_MS = 50;
/** Stalls and GC pauses kept for the sampler's attribution (the rest are counted only). */
const KEPT = 10_000;

export class LoopLagMonitor {
  readonly histogram = createUsHistogram();
  over80 = 0;
  /** Each wake later than STALL_MS: when it came and how late (the loop was held for that long before it). */
  readonly stalls: Array<{ end_s: number; ms: number }> = [];
  private cancel: (() => void) | null = null;
  private last_s = 0;

  constructor(
    private readonly interval_ms = 10,
    /** Its clock and its timer: real ones, or a test's, which then decides when each wake comes. */
    private readonly clock: TimerHost = nodeTimerHost,
    /** Told of every lag measured, with its time (a timeline bins them). */
    private readonly onLag?: (t_s: number, lag_ms: number) => void,
  ) {}

  start(): this {
    this.last_s = this.clock.now_s();
    const tick = () => {
      const now_s = this.clock.now_s();
      const lag_ms = Math.max(0, (now_s - this.last_s) * 1000 - this.interval_ms);
      recordMs(this.histogram, lag_ms);
      if (lag_ms > 80) this.over80++;
      if (lag_ms > STALL_MS && this.stalls.length < KEPT) this.stalls.push({ end_s: now_s, ms: lag_ms });
      this.onLag?.(now_s, lag_ms);
      this.last_s = now_s;
      this.cancel = this.clock.arm(this.interval_ms, tick, { background: true });
    };
    this.cancel = this.clock.arm(this.interval_ms, tick, { background: true });
    return this;
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  figures(): LoopLagFigures {
    const p = percentilesMs(this.histogram);
    return { p50: p.p50, p99: p.p99, max: p.max, over_80ms: this.over80, samples: p.count };
  }
}

export interface GcFigures {
  count: number;
  total: number;
  max: number;
}

/** GC pauses from perf_hooks `gc` entries, in ms. */
export class GcMonitor {
  count = 0;
  total_ms = 0;
  max_ms = 0;
  /** Pauses of 1 ms or more (up to 100,000), for attributing loop stalls. */
  readonly pauses: Array<{ start_s: number; ms: number }> = [];
  private observer: PerformanceObserver | null = null;

  constructor(
    /** Told of every pause with its start on the monotonic clock (a timeline bins them). */
    private readonly onPause?: (t_s: number, ms: number) => void,
    private readonly clock: Clock = monotonicClock,
  ) {}

  start(): this {
    // perf_hooks times run from the process's time origin; the offset maps them to the clock.
    const offset_s = this.clock.now_s() - performance.now() / 1000;
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        this.onPause?.(offset_s + entry.startTime / 1000, entry.duration);
        if (entry.duration >= 1 && this.pauses.length < KEPT * 10) this.pauses.push({ start_s: offset_s + entry.startTime / 1000, ms: entry.duration });
        this.count++;
        this.total_ms += entry.duration;
        if (entry.duration > this.max_ms) this.max_ms = entry.duration;
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
    return this;
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = null;
  }

  figures(): GcFigures {
    const r = (v: number) => Math.round(v * 1000) / 1000;
    return { count: this.count, total: r(this.total_ms), max: r(this.max_ms) };
  }
}

export interface CpuFigures {
  user: number;
  system: number;
  total: number;
  /** CPU seconds (user + system) used in the window, and the window's wall seconds: the cores are their ratio. */
  cpu_s?: number;
  wall_s?: number;
}

/** CPU used by this process between start and now, in cores (CPU seconds per wall second). */
export class CpuMeter {
  private startUsage = process.cpuUsage();
  private start_s: number;

  constructor(private readonly clock: Clock = monotonicClock) {
    this.start_s = clock.now_s();
  }

  restart(): void {
    this.startUsage = process.cpuUsage();
    this.start_s = this.clock.now_s();
  }

  figures(): CpuFigures {
    const used = process.cpuUsage(this.startUsage);
    const wall_s = Math.max(1e-9, this.clock.now_s() - this.start_s);
    const r = (v: number) => Math.round(v * 1000) / 1000;
    const user = used.user / 1e6 / wall_s;
    const system = used.system / 1e6 / wall_s;
    const cpu_s = (used.user + used.system) / 1e6;
    return { user: r(user), system: r(system), total: r(user + system), cpu_s: Math.round(cpu_s * 1e6) / 1e6, wall_s: Math.round(wall_s * 1e6) / 1e6 };
  }
}

/** Peak resident set size of this process so far, in bytes (kernel's maxrss). */
export function peakRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}
