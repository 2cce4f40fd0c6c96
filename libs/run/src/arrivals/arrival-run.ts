import { Subscription, type Observable } from 'rxjs';
import { createUsHistogram, recordMs, type Histogram } from '@duplex-bench/metrics';
import type { Clock, DeadlineScheduler } from '@duplex-bench/pacer';
import { reasonOf, type SessionResult } from '@duplex-bench/session';
import type { PlannedArrival } from './arrival-schedule';

/** What the arrival run needs of a session (a RealtimeSession). */
export interface ArrivingSession {
  open(): Promise<void>;
  stream(start_s: number): Promise<SessionResult>;
  abandon(err: unknown): Promise<SessionResult>;
  /** When its connection opened and its handshake completed, clock seconds, once they did. */
  readonly opening: { connected_s: number | null; handshake_s: number | null };
}

/** Arrivals counted by what became of them. `arrived` counts every arrival that came due, skipped ones included. */
export interface ArrivalCounts {
  arrived: number;
  /** Due while `max_in_flight` sessions were in flight: not started, never delayed. */
  client_skipped: number;
  /** Admitted: the handshake completed and the session streamed. */
  started: number;
  /** Refused at admission (HTTP 503, `resource_exhausted`) after the retries asked for. */
  blocked: number;
  /** Could not open for another reason (connect failed or timed out, a handshake error). */
  failed_to_open: number;
}

export interface ArrivalRunOptions {
  schedule: PlannedArrival[];
  /** Intended start of arrival k: `origin_s + schedule[k].offset_s`. */
  origin_s: number;
  max_in_flight: number;
  /** Arrivals intended from here on are also counted apart (`steady`): the system starts empty. */
  steady_from_s: number;
  scheduler: DeadlineScheduler;
  clock: Clock;
  /** Emits once: no arrival after it (sessions in flight stop on their own stop$). */
  stop$: Observable<void>;
  /** A new session for an arrival, made when it comes due. */
  make(arrival: PlannedArrival): ArrivingSession;
  /** Sessions in flight (from their intended start to their end) changed to `n` at `t_s`. */
  onInFlight?(t_s: number, n: number): void;
  /** Each session's result as it ends. When given, the run keeps none of them (`run` resolves with none): a run of hours holds only its sessions in flight. */
  onEnded?(result: SessionResult): void;
}

const newCounts = (): ArrivalCounts => ({ arrived: 0, client_skipped: 0, started: 0, blocked: 0, failed_to_open: 0 });

/**
 * Sessions that arrive on a schedule fixed up front and leave when their input ends (open loop).
 * Arrival k is armed on the pacer's deadline scheduler for its own absolute instant when arrival
 * k − 1 fires (one pending entry, however long the schedule): a late fire never moves a later
 * instant, and no arrival waits for an earlier session. Connect and handshake latency run from
 * the intended start, so a late client shows in them; the client's own lateness at the start is
 * `start_lag`, apart.
 */
export class ArrivalRun {
  readonly counts = newCounts();
  /** As `counts`, over arrivals intended at or after `steady_from_s`. */
  readonly steady = newCounts();
  readonly connect: Histogram = createUsHistogram();
  readonly handshake: Histogram = createUsHistogram();
  readonly start_lag: Histogram = createUsHistogram();
  peak_in_flight = 0;
  private in_flight = 0;
  private stopped = false;

  constructor(private readonly o: ArrivalRunOptions) {}

  /** Sessions in flight now. */
  get inFlight(): number {
    return this.in_flight;
  }

  /** Runs every arrival; resolves once the last one in flight ended, with every session's result (none with `onEnded`). */
  run(): Promise<SessionResult[]> {
    const { schedule, scheduler, origin_s } = this.o;
    const results: Array<Promise<SessionResult>> = [];
    return new Promise<SessionResult[]>((resolve) => {
      let armedAll = false;
      let ended = false;
      let cancel = (): void => undefined;
      // Made up front: a stop that came before the run emits while subscribing.
      const stopping = new Subscription();
      const settle = () => {
        if (ended || !armedAll || this.in_flight > 0) return;
        ended = true;
        stopping.unsubscribe();
        void Promise.all(results).then(resolve);
      };
      const arm = (k: number) => {
        if (this.stopped || k >= schedule.length) {
          armedAll = true;
          settle();
          return;
        }
        const a = schedule[k];
        cancel = scheduler.schedule(origin_s + a.offset_s, (fired_s) => {
          // This arrival counts as in flight before the next is armed: after the last, the run ends only when it does.
          const one = this.arrive(a, fired_s);
          const onEnded = this.o.onEnded;
          if (one && onEnded) void one.then(onEnded).finally(settle);
          else if (one) results.push(one.finally(settle));
          arm(k + 1);
        });
      };
      stopping.add(
        this.o.stop$.subscribe(() => {
          this.stopped = true;
          cancel();
          armedAll = true;
          settle();
        }),
      );
      arm(0);
    });
  }

  private arrive(a: PlannedArrival, fired_s: number): Promise<SessionResult> | null {
    const intended_s = this.o.origin_s + a.offset_s;
    const counts = intended_s >= this.o.steady_from_s ? [this.counts, this.steady] : [this.counts];
    for (const c of counts) c.arrived++;
    if (this.in_flight >= this.o.max_in_flight) {
      for (const c of counts) c.client_skipped++;
      return null;
    }
    this.in_flight++;
    this.peak_in_flight = Math.max(this.peak_in_flight, this.in_flight);
    this.o.onInFlight?.(fired_s, this.in_flight);
    recordMs(this.start_lag, (fired_s - intended_s) * 1000);
    return this.live(this.o.make(a), intended_s, counts).finally(() => {
      this.in_flight--;
      this.o.onInFlight?.(this.o.clock.now_s(), this.in_flight);
    });
  }

  private async live(session: ArrivingSession, intended_s: number, counts: ArrivalCounts[]): Promise<SessionResult> {
    try {
      await session.open();
    } catch (err) {
      const blocked = reasonOf(err).reason === 'admission_refused';
      for (const c of counts) c[blocked ? 'blocked' : 'failed_to_open']++;
      // A refusal after the connection opened (vllm-omni's resource_exhausted) still timed the connect.
      this.timeOpening(session, intended_s);
      return session.abandon(err);
    }
    this.timeOpening(session, intended_s);
    for (const c of counts) c.started++;
    return session.stream(this.o.clock.now_s());
  }

  private timeOpening(session: ArrivingSession, intended_s: number): void {
    const { connected_s, handshake_s } = session.opening;
    if (connected_s !== null) recordMs(this.connect, (connected_s - intended_s) * 1000);
    if (handshake_s !== null) recordMs(this.handshake, (handshake_s - intended_s) * 1000);
  }
}
