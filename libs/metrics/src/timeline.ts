import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';

/** One process's measures in time bins, for plotting beside the pacing: what the loop, GC, CPU and the trace writer did when. */
export interface TimelineFile {
  format: 'duplex-bench.timeline';
  version: 1;
  /** Bin width, seconds; bin i starts at `origin_s + i × bin_s` on the host's monotonic clock. */
  bin_s: number;
  origin_s: number;
  loop_lag_max_ms: number[];
  gc_pause_total_ms: number[];
  gc_pause_max_ms: number[];
  cpu_cores: number[];
  trace_backlog_bytes: number[];
  /** Arrival runs only: the most sessions in flight at once within each bin. */
  active_sessions?: number[];
  /** The process's resident memory at the last sample before each bin's end, MiB (the RSS monitor's, once a second). */
  rss_mib?: number[];
  /**
   * A server that stamps its frames: the frames read within each bin that carried a send stamp, how
   * many of them were read more than 5 ms after the stamp, and the longest receive delay among them.
   */
  receive_delay_frames?: number[];
  receive_delay_over_5ms?: number[];
  receive_delay_max_ms?: number[];
  /** `--sampler`: each loop stall over 50 ms, its start (monotonic seconds), length and cause. */
  stalls?: Array<{ start_s: number; ms: number; cause: string }>;
  measurement_origin: Record<string, string>;
}

/** The receive delay each bin counts the frames past: issue 49's bound on a 512-session run's p99. */
const RECEIVE_DELAY_BOUND_MS = 5;

/**
 * Bins of one process's own measures from `origin_s`: the longest loop lag and the GC pauses that
 * fell in each bin, and, sampled at each bin's end, the CPU it used and the trace writer's backlog.
 */
export class Timeline {
  private readonly lag: number[] = [];
  private readonly gcTotal: number[] = [];
  private readonly gcMax: number[] = [];
  private readonly cpu: number[] = [];
  private readonly backlog: number[] = [];
  private readonly active: number[] = [];
  private activeNow: (() => number) | null = null;
  private rssNow: (() => number | null) | null = null;
  private readonly rss: number[] = [];
  private readonly stamped: number[] = [];
  private readonly stampedLate: number[] = [];
  private readonly delayMax: number[] = [];
  private cancel: (() => void) | null = null;
  private lastCpu = process.cpuUsage();
  private last_s: number;
  readonly origin_s: number;

  constructor(
    readonly bin_s = 0.5,
    /** Its clock and its timer: real ones, or a test's. */
    private readonly clock: TimerHost = nodeTimerHost,
    private backlogBytes: () => number = () => 0,
  ) {
    this.origin_s = clock.now_s();
    this.last_s = this.origin_s;
  }

  private bin(t_s: number): number {
    return Math.max(0, Math.floor((t_s - this.origin_s) / this.bin_s));
  }

  private static maxInto(a: number[], i: number, v: number): void {
    while (a.length <= i) a.push(0);
    if (v > a[i]) a[i] = v;
  }

  private static addInto(a: number[], i: number, v: number): void {
    while (a.length <= i) a.push(0);
    a[i] += v;
  }

  /** A loop lag of `ms` measured at `t_s`. */
  loopLag(t_s: number, ms: number): void {
    Timeline.maxInto(this.lag, this.bin(t_s), ms);
  }

  /** A GC pause of `ms` that started at `t_s`. */
  gcPause(t_s: number, ms: number): void {
    const i = this.bin(t_s);
    Timeline.maxInto(this.gcMax, i, ms);
    Timeline.addInto(this.gcTotal, i, ms);
  }

  /** A frame read at `t_s` whose server stamped it `ms` before (its receive delay). */
  receiveDelay(t_s: number, ms: number): void {
    const i = this.bin(t_s);
    Timeline.addInto(this.stamped, i, 1);
    if (ms > RECEIVE_DELAY_BOUND_MS) Timeline.addInto(this.stampedLate, i, 1);
    Timeline.maxInto(this.delayMax, i, ms);
  }

  /** Where the trace writer's backlog is read from at each bin's end. */
  watchBacklog(read: () => number): void {
    this.backlogBytes = read;
  }

  /** Arrival runs: where the sessions in flight are read from at each bin's end (a bin with no change keeps that count). */
  watchActive(read: () => number): void {
    this.activeNow = read;
  }

  /** Where the resident memory is read at each bin's end (MiB; the RSS monitor's last sample, no read of its own). */
  watchRss(read: () => number | null): void {
    this.rssNow = read;
  }

  /** Arrival runs: sessions in flight became `n` at `t_s`; each bin keeps the most. */
  activeSessions(t_s: number, n: number): void {
    Timeline.maxInto(this.active, this.bin(t_s), n);
  }

  /** Samples CPU and backlog at each bin's end until `stop`. */
  start(): this {
    const next = () => {
      this.cancel = this.clock.arm(this.bin_s * 1000, () => {
        this.sample();
        next();
      }, { background: true });
    };
    next();
    return this;
  }

  private sample(): void {
    const now_s = this.clock.now_s();
    const used = process.cpuUsage(this.lastCpu);
    this.lastCpu = process.cpuUsage();
    const i = this.bin(now_s - this.bin_s / 2);
    Timeline.maxInto(this.cpu, i, (used.user + used.system) / 1e6 / Math.max(1e-9, now_s - this.last_s));
    Timeline.maxInto(this.backlog, i, this.backlogBytes());
    if (this.activeNow) Timeline.maxInto(this.active, i, this.activeNow());
    const rss = this.rssNow?.();
    if (rss !== null && rss !== undefined) Timeline.maxInto(this.rss, i, rss);
    this.last_s = now_s;
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  toFile(): TimelineFile {
    const n = Math.max(this.lag.length, this.gcTotal.length, this.cpu.length, this.backlog.length, this.active.length, this.stamped.length);
    const fill = (a: number[]) => Array.from({ length: n }, (_, i) => Math.round((a[i] ?? 0) * 1000) / 1000);
    return {
      format: 'duplex-bench.timeline',
      version: 1,
      bin_s: this.bin_s,
      origin_s: this.origin_s,
      loop_lag_max_ms: fill(this.lag),
      gc_pause_total_ms: fill(this.gcTotal),
      gc_pause_max_ms: fill(this.gcMax),
      cpu_cores: fill(this.cpu),
      trace_backlog_bytes: fill(this.backlog),
      ...(this.activeNow ? { active_sessions: fill(this.active) } : {}),
      ...(this.rssNow ? { rss_mib: fill(this.rss) } : {}),
      ...(this.stamped.length > 0 ? { receive_delay_frames: fill(this.stamped), receive_delay_over_5ms: fill(this.stampedLate), receive_delay_max_ms: fill(this.delayMax) } : {}),
      measurement_origin: {
        ...(this.stamped.length > 0
          ? {
              receive_delay_frames: "client: frames read within the bin that carried the server's send stamp (duplex_bench_sent_ms)",
              receive_delay_over_5ms: "client: of those, the frames whose receive stamp came more than 5 ms after the server's send stamp",
              receive_delay_max_ms: "client: the longest receive delay (receive stamp minus the server's send stamp, the host's monotonic clock) of a frame read within the bin",
            }
          : {}),
        ...(this.rssNow ? { rss_mib: 'client process: resident set size (process.memoryUsage.rss), its latest once-a-second sample at the end of each bin' } : {}),
        ...(this.activeNow ? { active_sessions: 'client, arrival runs: the most sessions in flight at once within the bin, from its arrival timer firing to the end of the session' } : {}),
        loop_lag_max_ms: 'client process: the longest lateness of its 10 ms timer within the bin',
        gc_pause_total_ms: 'client process: perf_hooks gc entries starting within the bin, summed (gc_pause_max_ms: the longest)',
        cpu_cores: 'client process: CPU seconds per wall second, sampled at the end of each bin',
        trace_backlog_bytes: 'client: trace and receipt bytes handed to the writer thread and not yet written, sampled at the end of each bin',
      },
    };
  }
}
