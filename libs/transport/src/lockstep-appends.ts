import { Observable } from 'rxjs';
import type { Clock, TimerHost } from '@duplex-bench/pacer';
import type { Connection } from './connection';
import { TransportError } from './errors';
import type { SessionFlow } from './flow';
import { sendWithReceipt, type AppendAudio, type SendReceipt } from './send-on';

/** What the lockstep sends need to know of the input and the server's unit. */
export interface LockstepPlan {
  /** When the first packet goes (the session's start after the run's start gate), monotonic seconds. */
  start_s: number;
  packet_count: number;
  /** Input through packet `seq`, ms (the last packet may be short). */
  inputEndMs(seq: number): number;
  /** The server's unit (`native_unit_ms` of its grant). */
  unit_ms: number;
  /** Bound on each wait for a unit's `sglang.unit.done`, ms. */
  unit_timeout_ms: number;
}


/** Input units whose sends complete within this of a unit boundary have that unit whole (ms from bytes are exact, unit sums are not). */
const BOUNDARY_SLACK_MS = 1e-6;

/**
 * Lockstep sends (sglang-omni's client `pacing="lockstep"`, benchmarks/duplex/client.py@88ad7b44):
 * packets go back to back with no schedule, each append as the realtime path builds it; after the
 * packet that completes a unit's input the next waits until the server has reported that unit done
 * (`unitsDone$` emits the count of `sglang.unit.done` received), bounded by `unit_timeout_ms`. Nothing
 * waits after the last packet: its unit (short, or the last whole one) completes only once the input
 * ends, so the session sends `sglang.input_audio.end` at once (their client at that commit waits for
 * the short unit and hangs until its session timeout). A receipt's `scheduled_s` is its send start:
 * a lockstep packet has no due time.
 */
export function lockstepAppends(
  conn: Pick<Connection, 'send' | 'bufferedAmount'>,
  flow: Pick<SessionFlow, 'append'>,
  audio: AppendAudio,
  prefix: string,
  clock: Clock,
  /**
   * Its own timers, not the run's deadline scheduler: a bound is armed per unit and almost always
   * cancelled, and the scheduler keeps cancelled entries (and its timer armed) until their deadline.
   */
  timers: Pick<TimerHost, 'arm'>,
  unitsDone$: Observable<number>,
  plan: LockstepPlan,
): Observable<SendReceipt> {
  return new Observable<SendReceipt>((subscriber) => {
    let seq = 0;
    let done = 0;
    /** Units that must be done before the next packet goes; 0 while sending. */
    let waitingFor = 0;
    let cancelTimer: (() => void) | null = null;

    const pump = () => {
      while (seq < plan.packet_count) {
        const start_s = clock.now_s();
        const event_id = prefix + seq;
        const frame = flow.append(event_id, seq, seq * audio.packet_ms, audio.packetBase64(seq));
        const receipt = sendWithReceipt(conn, clock, seq, event_id, frame, start_s, start_s);
        const whole = Math.floor((plan.inputEndMs(seq) + BOUNDARY_SLACK_MS) / plan.unit_ms);
        seq++;
        subscriber.next(receipt);
        if (subscriber.closed) return;
        if (seq < plan.packet_count && whole > done) {
          waitingFor = whole;
          const unit = whole - 1;
          cancelTimer = timers.arm(plan.unit_timeout_ms, () => {
            cancelTimer = null;
            subscriber.error(new TransportError('unit_timeout', `lockstep: no sglang.unit.done for unit ${unit} within ${plan.unit_timeout_ms} ms of its input (${done} units done)`));
          });
          return;
        }
      }
      subscriber.complete();
    };

    const progress = unitsDone$.subscribe((n) => {
      done = n;
      if (waitingFor > 0 && done >= waitingFor) {
        waitingFor = 0;
        cancelTimer?.();
        cancelTimer = null;
        pump();
      }
    });
    if (clock.now_s() >= plan.start_s) pump();
    else cancelTimer = timers.arm(Math.ceil((plan.start_s - clock.now_s()) * 1000), () => ((cancelTimer = null), pump()));
    return () => {
      progress.unsubscribe();
      cancelTimer?.();
    };
  });
}
