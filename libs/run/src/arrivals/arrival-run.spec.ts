import { NEVER, Subject } from 'rxjs';
import { silencePackets } from '@duplex-bench/audio';
import { PacingRecorder, SampleStore } from '@duplex-bench/metrics';
import { DeadlineScheduler } from '@duplex-bench/pacer';
import { ManualTimers, VirtualTime } from '@duplex-bench/pacer/testing';
import { nativeDrained, nativeGrant, nativeSessionClosed, nativeSessionCreated, nativeSessionUpdated, type NativeLimits } from '@duplex-bench/protocol';
import { RealtimeSession, type SessionContext, type SessionResult } from '@duplex-bench/session';
import { TransportError } from '@duplex-bench/transport';
import { FakeServer, type FakeServerSide } from '@duplex-bench/transport/testing';
import type { AdmissionRefusal, SessionTraceSink } from '@duplex-bench/tracer';
import { ArrivalRun, type ArrivingSession } from './arrival-run';
import { arrivalSchedule, type PlannedArrival } from './arrival-schedule';

/** A session whose open and stream the test settles by hand. */
class FakeSession implements ArrivingSession {
  readonly opening = { connected_s: null as number | null, handshake_s: null as number | null };
  openCalls = 0;
  streamedFrom: number | null = null;
  abandoned = false;
  private opened!: { resolve: () => void; reject: (err: unknown) => void };
  private streamed!: (r: SessionResult) => void;
  constructor(readonly id: string) {}
  open(): Promise<void> {
    this.openCalls++;
    return new Promise((resolve, reject) => (this.opened = { resolve, reject }));
  }
  admit(connected_s: number, handshake_s: number): void {
    Object.assign(this.opening, { connected_s, handshake_s });
    this.opened.resolve();
  }
  refuse(err: unknown): void {
    this.opened.reject(err);
  }
  stream(start_s: number): Promise<SessionResult> {
    this.streamedFrom = start_s;
    return new Promise((resolve) => (this.streamed = resolve));
  }
  end(): void {
    this.streamed({ id: this.id, completed: true, violation: false, packets_sent: 1, late: 0, server_errors: 0 });
  }
  abandon(): Promise<SessionResult> {
    this.abandoned = true;
    return Promise.resolve({ id: this.id, completed: false, reason: 'admission_refused', violation: false, packets_sent: 0, late: 0, server_errors: 0 });
  }
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(offsets: number[], max_in_flight = 10, steady_from_s = 0, onEnded?: (r: SessionResult) => void) {
  const timers = new ManualTimers();
  const scheduler = new DeadlineScheduler({ host: timers });
  const stop$ = new Subject<void>();
  const sessions: FakeSession[] = [];
  const inFlight: Array<[number, number]> = [];
  const schedule: PlannedArrival[] = offsets.map((offset_s, index) => ({ index, offset_s, duration_s: 1 }));
  const run = new ArrivalRun({
    schedule,
    origin_s: 10,
    max_in_flight,
    steady_from_s,
    scheduler,
    clock: timers,
    stop$,
    make: (a) => {
      const s = new FakeSession(`a${a.index}`);
      sessions.push(s);
      return s;
    },
    onInFlight: (t_s, n) => inFlight.push([t_s, n]),
    onEnded,
  });
  timers.now = 10_000;
  return { timers, run, sessions, stop$, inFlight };
}

describe('ArrivalRun', () => {
  it('skips a session due while --max-in-flight are in flight, never delaying it', async () => {
    const { timers, run, sessions } = setup([0, 1, 2, 3], 2);
    const done = run.run();
    for (let i = 0; i < 4; i++) timers.fire();
    await flush();
    // Two opened; the two due while they were in flight were counted, not started.
    expect(sessions.map((s) => s.id)).toEqual(['a0', 'a1']);
    expect(run.counts).toEqual({ arrived: 4, client_skipped: 2, started: 0, blocked: 0, failed_to_open: 0 });
    sessions.forEach((s) => s.admit(11, 11));
    await flush();
    sessions.forEach((s) => s.end());
    expect((await done).map((r) => r.id)).toEqual(['a0', 'a1']);
    expect(run.counts.started).toBe(2);
    expect(run.peak_in_flight).toBe(2);
  });

  it('keeps every intended instant where the schedule put it, whatever the lateness of the one before', async () => {
    const { timers, run, sessions } = setup([0, 1]);
    void run.run();
    // Arrival 0 fires 500 ms late: arrival 1 is still due at origin + 1 s, not 1 s after that fire.
    timers.fire(500);
    expect(timers.pending.map((p) => p.due_ms)).toEqual([11_000]);
    // Its connect and handshake run from the intended start (late client included); its start lag is the client's own.
    sessions[0].admit(10.6, 10.7);
    await flush();
    expect(run.connect.maxValue).toBe(600_000);
    expect(run.handshake.maxValue).toBe(700_000);
    expect(run.start_lag.maxValue).toBe(500_000);
    expect(sessions[0].streamedFrom).toBe(10.5);
  });

  it('counts a session refused at admission as blocked, and its result is kept', async () => {
    const { timers, run, sessions } = setup([0]);
    const done = run.run();
    timers.fire();
    sessions[0].refuse(new TransportError('admission_refused', 'server refused the session with HTTP 503 1 times', { status: 503 }));
    const results = await done;
    expect(run.counts).toMatchObject({ arrived: 1, blocked: 1, started: 0 });
    expect(sessions[0].abandoned).toBe(true);
    expect(results).toEqual([expect.objectContaining({ id: 'a0', reason: 'admission_refused' })]);
    expect(run.handshake.totalCount).toBe(0);
  });

  it('counts apart the arrivals intended after the warm-up', async () => {
    const { timers, run, sessions } = setup([0, 1, 2], 10, 11);
    const done = run.run();
    for (let i = 0; i < 3; i++) timers.fire();
    await flush();
    sessions[0].admit(10, 10);
    sessions[1].refuse(new TransportError('admission_refused', 'full', { status: 503 }));
    sessions[2].admit(12, 12);
    await flush();
    sessions[0].end();
    sessions[2].end();
    await done;
    expect(run.counts).toMatchObject({ arrived: 3, started: 2, blocked: 1 });
    expect(run.steady).toMatchObject({ arrived: 2, started: 1, blocked: 1 });
  });

  it('with onEnded, hands over each result as its session ends and keeps none', async () => {
    const ended: string[] = [];
    const { timers, run, sessions } = setup([0, 1], 10, 0, (r) => ended.push(r.id));
    const done = run.run();
    timers.fire();
    timers.fire();
    await flush();
    sessions.forEach((s) => s.admit(11.1, 11.1));
    await flush();
    sessions[1].end();
    await flush();
    expect(ended).toEqual(['a1']);
    sessions[0].end();
    expect(await done).toEqual([]);
    expect(ended).toEqual(['a1', 'a0']);
  });

  it('schedules no arrival after a stop, and ends once those in flight end', async () => {
    const { timers, run, sessions, stop$, inFlight } = setup([0, 1, 2]);
    const done = run.run();
    timers.fire();
    stop$.next();
    // The next arrival's deadline was cancelled: its timer fires and starts nothing.
    timers.fire();
    expect(sessions).toHaveLength(1);
    sessions[0].admit(10, 10);
    await flush();
    sessions[0].end();
    expect(await done).toHaveLength(1);
    expect(run.counts.arrived).toBe(1);
    expect(inFlight.map(([, n]) => n)).toEqual([1, 0]);
  });
});

/** Erlang B(N, A) by its recursion: B(0) = 1, B(n) = A·B(n−1) / (n + A·B(n−1)). */
function erlangB(servers: number, erlangs: number): number {
  let b = 1;
  for (let n = 1; n <= servers; n++) b = (erlangs * b) / (n + erlangs * b);
  return b;
}

/** What the fake server's grant states it enforces: nothing a session here reaches. */
const LIMITS: NativeLimits = {
  max_input_bytes: 3600 * 32_000,
  max_output_bytes: 3600 * 48_000,
  max_output_events: 3600 * 1000,
  max_history_chars: 65536,
  cleanup_timeout_s: 30,
};

/**
 * A native server of `slots` slots: an upgrade while every slot is held is refused with HTTP 503
 * (what a full sglang-omni server does); a slot is held from the upgrade it accepted to the
 * session's `session.close`. `seen` is the server's own count of what came to it.
 */
function slotServer(time: VirtualTime, slots: number) {
  const seen = { upgrades: 0, accepted: 0, refused: 0, closed: 0, held: 0, peak_held: 0 };
  const session = (side: FakeServerSide, sid: string) => {
    let n = 0;
    const id = () => `evt_${sid}_${n++}`;
    side.send(nativeSessionCreated(id(), sid));
    side.onMessage((e) => {
      const client = String(e.event_id);
      if (e.type === 'session.update') side.send(nativeSessionUpdated(id(), client, sid, nativeGrant(24_000, 80, LIMITS)));
      else if (e.type === 'sglang.input_audio.end') side.send(nativeDrained(id(), client, { accepted_end_ms: 0, consumed_ms: 0, discarded_ms: 0, padding_ms: 0 }));
      else if (e.type === 'session.close') {
        seen.held--;
        seen.closed++;
        side.send(nativeSessionClosed(id(), client));
      }
    });
  };
  const server = new FakeServer(time, () => {
    seen.upgrades++;
    if (seen.held >= slots) {
      seen.refused++;
      return { refuse: 503 };
    }
    // The slot is taken when the upgrade is answered: the next upgrade sees it held.
    seen.held++;
    seen.accepted++;
    seen.peak_held = Math.max(seen.peak_held, seen.held);
    const sid = `sess_${seen.accepted}`;
    return { accept: (side) => session(side, sid) };
  });
  return { server, seen };
}

/** Keeps only what a refused admission leaves in a trace: its admission records (retried refusals) and errors. */
class RefusalSink implements SessionTraceSink {
  readonly tracesFrames = false;
  readonly refusals: Array<{ attempt: number; refusal: AdmissionRefusal }> = [];
  readonly errors: string[] = [];
  readonly sent = (): void => undefined;
  readonly received = (): void => undefined;
  readonly receipt = (): void => undefined;
  error(message: string): void {
    this.errors.push(message);
  }
  admission(attempt: number, refusal: AdmissionRefusal): void {
    this.refusals.push({ attempt, refusal });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('ArrivalRun of real sessions against a server of 8 slots, in virtual time', () => {
  it('blocks at Erlang B(8, 8) within its 95% binomial interval, and counts exactly what the server saw', async () => {
    const SLOTS = 8;
    // Poisson arrivals at 4/s of exponential 2 s sessions: 8 Erlangs offered to 8 slots. 500 s
    // draws about 2,000 arrivals; after a 20 s warm-up (the server starts empty) the 95% binomial
    // interval around B(8, 8) = 0.2356 is about ±0.019, which leaves out 7.5 Erlangs (0.204) and
    // 8.5 (0.267); a client that retried or delayed a refused arrival would block far less. Seed 3
    // fixes the instants and the durations, so the outcome is the same on every run. Blocking is
    // correlated in time (a full server stays full a while), so across seeds the spread is wider
    // than the binomial interval: a change of the schedule's draws may need another look, not a
    // wider bound.
    const RATE_PER_S = 4;
    const MEAN_S = 2;
    const RUN_FOR_S = 500;
    const WARMUP_S = 20;
    const ORIGIN_S = 1;
    // A session holds its slot until its input has played out (origin plus the input's length),
    // whatever the packet size: 1 s packets keep the timers to run few.
    const PACKET_MS = 1000;
    const expected = erlangB(SLOTS, RATE_PER_S * MEAN_S);
    expect(expected).toBeCloseTo(0.2356, 4);

    const time = new VirtualTime();
    const scheduler = new DeadlineScheduler({ host: time });
    const { server, seen } = slotServer(time, SLOTS);
    const sink = new RefusalSink();
    const ctx: SessionContext = {
      url: 'ws://fake/v1/duplex',
      dialect: { protocol: 'native' },
      clock: time,
      timers: time,
      connect: server.connect,
      scheduler,
      packets: silencePackets(MEAN_S, PACKET_MS),
      pacing: new PacingRecorder(PACKET_MS),
      samples: new SampleStore(PACKET_MS),
      connect_timeout_ms: 10_000,
      drain_timeout_ms: 30_000,
      close_timeout_ms: 5_000,
      // An arrival run retries no refusal unless asked (`run --arrival-rate`): a blocked arrival is lost, as Erlang B has it.
      admission: { retries: 0, backoff_ms: 250, max_backoff_ms: 250 },
      output_sample_rate: 24_000,
      stop$: NEVER,
      unknownEvents: new Map(),
      onStreamStart: () => undefined,
      onStreamEnd: () => undefined,
    };
    const schedule = arrivalSchedule({ rate_per_s: RATE_PER_S, process: 'poisson', run_for_s: RUN_FOR_S, seed: 3, duration: { kind: 'exp', mean_s: MEAN_S } });
    const ended = { completed: 0, refused: 0, other: 0 };
    const run = new ArrivalRun({
      schedule,
      origin_s: ORIGIN_S,
      max_in_flight: 1000,
      steady_from_s: ORIGIN_S + WARMUP_S,
      scheduler,
      clock: time,
      stop$: NEVER,
      make: (a) => new RealtimeSession(`a${a.index}`, ctx, sink, silencePackets(a.duration_s, PACKET_MS)),
      onEnded: (r) => ended[r.completed ? 'completed' : r.reason === 'admission_refused' ? 'refused' : 'other']++,
    });
    time.now = ORIGIN_S * 1000;
    await time.run(run.run(), (RUN_FOR_S + 120) * 1000);

    // The probe's counts are the server's: one upgrade per arrival, each refusal a blocked arrival, each acceptance a started one that completed.
    expect(run.counts).toEqual({ arrived: schedule.length, client_skipped: 0, started: seen.accepted, blocked: seen.refused, failed_to_open: 0 });
    expect(seen.upgrades).toBe(schedule.length);
    expect(ended).toEqual({ completed: seen.accepted, refused: seen.refused, other: 0 });
    // No retries: each refusal spends them, so it is the session's error, never an admission record (sglang-omni's client's `admit`).
    expect(sink.refusals).toEqual([]);
    expect(sink.errors).toHaveLength(seen.refused);
    expect(sink.errors.every((m) => /^admission_refused: server refused the session with HTTP 503 1 times/.test(m))).toBe(true);
    // The server was full, never over, and every slot came back.
    expect(seen.peak_held).toBe(SLOTS);
    expect(seen).toMatchObject({ held: 0, closed: seen.accepted });

    const n = run.steady.arrived;
    const blocking = run.steady.blocked / n;
    const half = 1.96 * Math.sqrt((expected * (1 - expected)) / n);
    expect(n).toBeGreaterThan(1800);
    expect(blocking).toBeGreaterThanOrEqual(expected - half);
    expect(blocking).toBeLessThanOrEqual(expected + half);
    // The interval tells half an Erlang either way.
    expect(erlangB(SLOTS, 7.5)).toBeLessThan(expected - half);
    expect(erlangB(SLOTS, 8.5)).toBeGreaterThan(expected + half);
  }, 60_000);
});
