import { tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { SessionFlow } from './flow';

/**
 * After each append, the frames the dialect's flow says follow it (turn commits, and with openai
 * the response it asks for), handed to `send`: right after the append that closes the turn, not
 * paced themselves.
 */
export function sendCommits<T extends { seq: number }>(flow: Pick<SessionFlow, 'afterAppend'>, send: (frame: string) => void): MonoTypeOperatorFunction<T> {
  return tap((packet) => {
    const frames = flow.afterAppend(packet.seq);
    if (frames) for (const frame of frames) send(frame);
  });
}
