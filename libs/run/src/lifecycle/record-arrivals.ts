import type { PacketSource, Sample } from '@duplex-bench/audio';
import type { Clock } from '@duplex-bench/pacer';
import { arrivalsSummary, type ArrivalsSummary } from '@duplex-bench/results';
import { ArrivalRun, type ArrivingSession } from '../arrivals/arrival-run';
import { arrivalSchedule } from '../arrivals/arrival-schedule';
import type { ProcessMeasures } from '../process-measures';
import { RealtimeSession, type SessionContext, type SessionResult } from '@duplex-bench/session';
import type { TraceWriter } from '@duplex-bench/tracer';
import type { CameraFrames } from '@duplex-bench/transport';
import type { Observable } from 'rxjs';
import type { RecordArrivals } from './run-settings';

/** Samples whose packets are made ahead of their arrival, so that reading a WAV never delays a connect. */
const PREFETCH = 8;

export interface RecordArrivalsInput {
  arrivals: RecordArrivals;
  /** The samples left to record, in order: arrival by arrival, each admitted one takes the next. */
  todo: Sample[];
  /** Start of the schedule, clock seconds. */
  origin_s: number;
  measures: ProcessMeasures;
  ctx: SessionContext;
  writer: TraceWriter;
  clock: Clock;
  stop$: Observable<void>;
  packetsOf(sample: Sample): Promise<PacketSource>;
  /** A sample's own camera frames, read before the run; the run's `--video` for the others. */
  cameraOf?(sample: Sample): CameraFrames | undefined;
  /** Each session's sample and result as it ends; awaited before the run resolves. */
  finish(sample: Sample, result: SessionResult): Promise<void>;
}

/**
 * `record --arrival-rate`: the samples left to record arrive on one open-loop schedule fixed from
 * the seed (run's `ArrivalRun`), at most one arrival per sample; each admitted arrival streams the
 * next sample, as long as that sample is. A blocked or skipped arrival takes no sample, and a
 * sample that was refused is stored incomplete: both are recorded by the next invocation.
 */
export async function recordArrivals(i: RecordArrivalsInput): Promise<ArrivalsSummary> {
  const a = i.arrivals;
  // Without --run-for, long enough that the schedule holds an arrival for every sample (then cut to them).
  const run_for_s = a.run_for_s ?? (4 * i.todo.length) / a.rate_per_s + 10;
  const schedule = arrivalSchedule({ rate_per_s: a.rate_per_s, process: a.process, run_for_s, seed: a.seed, duration: { kind: 'fixed', s: 1 } }).slice(0, i.todo.length);
  const loading = new Map<number, Promise<PacketSource>>();
  const load = (k: number): void => {
    if (k < i.todo.length && !loading.has(k)) loading.set(k, i.packetsOf(i.todo[k]));
  };
  for (let k = 0; k < PREFETCH; k++) load(k);
  await Promise.all(loading.values());
  const ready = new Map<number, PacketSource>();
  // Kept once made, unless its arrival came first and took the promise (then it is not kept twice).
  const keep = (k: number) =>
    void loading.get(k)?.then(
      (p) => loading.has(k) && ready.set(k, p),
      () => undefined,
    );
  for (const k of loading.keys()) keep(k);

  let completed = 0;
  const finishing: Array<Promise<void>> = [];
  let next = 0;
  const run = new ArrivalRun({
    schedule,
    origin_s: i.origin_s,
    max_in_flight: a.max_in_flight,
    steady_from_s: i.origin_s + a.warmup_s,
    scheduler: i.measures.scheduler,
    clock: i.clock,
    stop$: i.stop$,
    make: (): ArrivingSession => {
      const k = next++;
      const sample = i.todo[k];
      load(k + PREFETCH);
      keep(k + PREFETCH);
      const made = (packets: PacketSource) => new RealtimeSession(sample.id, i.ctx, i.writer.openSession(sample.id), packets, i.cameraOf?.(sample));
      const packets = ready.get(k);
      const pending = loading.get(k);
      ready.delete(k);
      loading.delete(k);
      const session = packets ? made(packets) : null;
      const result = (r: Promise<SessionResult>) =>
        r.then((res) => {
          if (res.completed) completed++;
          finishing.push(i.finish(sample, res));
          return res;
        });
      if (session) return { opening: session.opening, open: () => session.open(), stream: (s) => result(session.stream(s)), abandon: (err) => result(session.abandon(err)) };
      // Arrivals outran the prefetch: the sample's packets are still being made, so this connect is late by that time (start_lag does not show it).
      let late: RealtimeSession | null = null;
      const waiting = (pending ?? i.packetsOf(sample)).then((p) => (late = made(p)));
      return {
        get opening() {
          return late?.opening ?? { connected_s: null, handshake_s: null };
        },
        open: async () => (await waiting).open(),
        stream: (s) => result(waiting.then((l) => l.stream(s))),
        abandon: (err) => result(waiting.then((l) => l.abandon(err))),
      };
    },
    onInFlight: (t_s, n) => i.measures.timeline.activeSessions(t_s, n),
  });
  i.measures.timeline.watchActive(() => run.inFlight);
  await run.run();
  await Promise.all(finishing);
  const taken = i.todo.slice(0, next);
  const mean_s = taken.length > 0 ? taken.reduce((sum, s) => sum + s.duration_s, 0) / taken.length : 0;
  const summary = arrivalsSummary({
    process: a.process,
    rate_per_s: a.rate_per_s,
    run_for_s: a.run_for_s ?? Math.ceil(schedule.at(-1)?.offset_s ?? 0),
    seed: a.seed,
    session_duration: `as long as each sample (mean ${mean_s.toFixed(1)} s)`,
    mean_session_s: mean_s,
    mean_session_origin: `the mean length of the ${taken.length} samples that arrived`,
    max_in_flight: a.max_in_flight,
    peak_in_flight: run.peak_in_flight,
    completed,
    counts: run.counts,
    ...(a.warmup_s > 0 ? { steady: { from_s: a.warmup_s, counts: run.steady } } : {}),
    connect: run.connect,
    handshake: run.handshake,
    start_lag: run.start_lag,
  });
  return summary;
}
