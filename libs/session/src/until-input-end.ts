import type { Observable, Subscription } from 'rxjs';
import { pcm16BytesPerMs } from '@duplex-bench/audio';
import type { ResponseTracker } from '@duplex-bench/metrics';
import type { SessionContext } from './context';

export interface InputEnd {
  ctx: Pick<SessionContext, 'allSent' | 'lockstep' | 'clock' | 'scheduler'>;
  /** Send start of packet 0 (null: none went), and the input sent since. */
  origin_s: number | null;
  input_bytes: number;
  sample_rate: number;
  responses: ResponseTracker | null;
  /** A server error that stops the session ends every wait at once. */
  stopped$: Observable<void>;
  stopped(): boolean;
  /** Throws what ended the session meanwhile (a broken socket, a stopping error). */
  throwIfEnded(): void;
}

/**
 * Waits until the end of input may go. With the run's hold (`allSent`), until every session sent
 * its last packet: that wait is the client's own, measured and left out of the server's figures.
 * Then (realtime pacing) no earlier than packet 0's send start plus the input sent: its audio has
 * played out in real time, as sglang-omni's client waits. Lockstep has no play-out to wait for.
 */
export async function untilInputEnd(o: InputEnd): Promise<void> {
  const { ctx } = o;
  const played_s = o.origin_s === null ? null : o.origin_s + o.input_bytes / pcm16BytesPerMs(o.sample_rate) / 1000;
  if (ctx.allSent && !ctx.lockstep) {
    await unlessStopped(ctx.allSent.turn(ctx.scheduler), o);
    if (played_s !== null) o.responses?.excludeInputEndHold(played_s, ctx.clock.now_s());
  }
  o.throwIfEnded();
  if (ctx.lockstep || played_s === null || ctx.clock.now_s() >= played_s) return;
  await unlessStopped(new Promise<void>((resolve) => ctx.scheduler.schedule(played_s, () => resolve())), o);
}

/** Resolves when `until` does, or at once when a server error stops the session. */
function unlessStopped(until: Promise<void>, o: Pick<InputEnd, 'stopped$' | 'stopped'>): Promise<void> {
  if (o.stopped()) return Promise.resolve();
  let sub: Subscription | undefined;
  const stopped = new Promise<void>((resolve) => (sub = o.stopped$.subscribe(() => resolve())));
  return Promise.race([until, stopped]).finally(() => sub?.unsubscribe());
}
