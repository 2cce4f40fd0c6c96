import { Subject } from 'rxjs';
import { DeadlineScheduler } from '@duplex-bench/pacer';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import type { SessionResult } from '@duplex-bench/session';
import { TransportError } from '@duplex-bench/transport';
import { ArrivalRun, type ArrivingSession } from './arrival-run';
import type { PlannedArrival } from './arrival-schedule';

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
