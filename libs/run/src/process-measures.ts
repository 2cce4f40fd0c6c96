import {
  createUsHistogram,
  CpuMeter,
  GcMonitor,
  LoopLagMonitor,
  OverlapCounter,
  PacingRecorder,
  peakRssBytes,
  RssMonitor,
  percentilesMs,
  recordMs,
  SampleStore,
  Timeline,
  UnitLagRecorder,
  type PacingFigures,
} from '@duplex-bench/metrics';
import { DeadlineScheduler, timersOn, type Clock } from '@duplex-bench/pacer';
import type { TraceWriterStats } from '@duplex-bench/tracer';
import { processReads } from '@duplex-bench/transport';
import type { SessionContext, SessionResult } from '@duplex-bench/session';
import { buildSummary, type PacingMode, type RunSummary } from '@duplex-bench/results';

/**
 * What one probe process measures while its sessions stream (pacing, its own loop, GC, CPU,
 * overlapping streams) and the summary it makes of them; `run` and `record` share it.
 */
export class ProcessMeasures {
  readonly loop: LoopLagMonitor;
  /** The loop, GC, CPU and trace backlog in 0.5 s bins (timeline.json), for plotting beside the pacing. */
  readonly timeline: Timeline;
  readonly gc: GcMonitor;
  readonly cpu: CpuMeter;
  /** Resident memory each second, and its growth after the warm-up (`countRssFrom`). */
  readonly rss: RssMonitor;
  readonly scheduler = new DeadlineScheduler();
  readonly overlap = new OverlapCounter();
  readonly pacing: PacingRecorder;
  readonly samples: SampleStore;
  /** Native servers: the lag of each unit, pooled over this process's sessions. */
  readonly units = new UnitLagRecorder();
  /** Received event types the dialect does not define, counted by type. */
  readonly unknownEvents = new Map<string, number>();
  /** Each stamped frame's receive delay (server send stamp to this client's receive stamp), µs; empty when the server stamps none. */
  readonly receiveDelay = createUsHistogram();

  /** The process's count of held-back reads when this run began: a process may run more than one. */
  private readonly reads_paused_at_start = processReads.paused;

  constructor(
    readonly packet_ms: number,
    private readonly clock: Clock,
  ) {
    const timers = timersOn(clock);
    this.timeline = new Timeline(0.5, timers).start();
    this.loop = new LoopLagMonitor(10, timers, (t_s, ms) => this.timeline.loopLag(t_s, ms)).start();
    this.gc = new GcMonitor((t_s, ms) => this.timeline.gcPause(t_s, ms), clock).start();
    this.cpu = new CpuMeter(clock);
    this.rss = new RssMonitor(0, 1000, timers).start();
    this.timeline.watchRss(() => this.rss.now_mib);
    this.pacing = new PacingRecorder(packet_ms);
    this.samples = new SampleStore(packet_ms);
  }

  /** The context sessions of this process share: the measures' scheduler, recorders and counters, plus `own`. */
  sessionContext(
    own: Omit<SessionContext, 'clock' | 'scheduler' | 'pacing' | 'samples' | 'units' | 'unknownEvents' | 'onStreamStart' | 'onStreamEnd'>,
  ): SessionContext {
    return {
      ...own,
      units: this.units,
      clock: this.clock,
      scheduler: this.scheduler,
      pacing: this.pacing,
      samples: this.samples,
      unknownEvents: this.unknownEvents,
      onStreamStart: () => this.overlap.open(),
      onStreamEnd: () => this.overlap.close(),
      // One host's monotonic clock on both sides: a reading under 0 is the clocks' resolution, counted as 0.
      on_sent_stamp: (delay_ms, received_s) => {
        const ms = delay_ms > 0 ? delay_ms : 0;
        recordMs(this.receiveDelay, ms);
        this.timeline.receiveDelay(received_s, ms);
      },
    };
  }

  /** Steady state starts at clock second `t_s` (the gate plus the warm-up): the steady pacing figures and the RSS growth count from there. */
  steadyFrom(t_s: number): void {
    this.pacing.setSteadyFrom(t_s);
    this.rss.countFrom(t_s);
  }

  /** The load ends at clock second `t_s` (the last arrival, the last packet): the RSS growth counts up to there. */
  loadUntil(t_s: number): void {
    this.rss.countUntil(t_s);
  }

  stop(): void {
    this.rss.stop();
    this.loop.stop();
    this.gc.stop();
    this.timeline.stop();
  }

  /** `load.client_loop` of run.json. */
  clientLoop(): { max_lag_ms: number | null; lags_over_80ms: number } {
    const f = this.loop.figures();
    return { max_lag_ms: f.max, lags_over_80ms: f.over_80ms };
  }

  /** The summary of `results`; `pacing` replaces this process's own when the results span other invocations (a resumed recording). */
  summary(
    results: SessionResult[],
    i: { interrupted: boolean; trace: TraceWriterStats; warmup_s: number; duration_s: number; pacing?: PacingFigures; pacing_mode?: PacingMode },
  ): RunSummary {
    return buildSummary({
      results,
      pacing: i.pacing ?? this.pacing.figures(),
      steady: percentilesMs(this.pacing.steadyDeviation),
      warmup_s: i.warmup_s,
      loop: this.loop.figures(),
      gc: this.gc.figures(),
      cpu: this.cpu.figures(),
      peak_rss_bytes: peakRssBytes(),
      rss: this.rss.figures(),
      peak_overlapping_streams: this.overlap.peak,
      scheduler: this.scheduler.stats(),
      unknown: this.unknownEvents,
      interrupted: i.interrupted,
      trace: i.trace,
      packet_ms: this.packet_ms,
      duration_s: i.duration_s,
      units: this.units.unit_ms > 0 ? { counts: this.units.counts(), lag: this.units.lag, units_per_s: this.units.units_per_s } : undefined,
      pacing_mode: i.pacing_mode ?? 'realtime',
      receive_delay: percentilesMs(this.receiveDelay),
      reads_paused: processReads.paused - this.reads_paused_at_start,
    });
  }
}
