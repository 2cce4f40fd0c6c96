import type { SessionFlow } from './flow';

/**
 * The stage that, after each append, hands the frames the dialect's flow says follow it (turn
 * commits, and with openai the response it asks for) to `send`: right after the append that
 * closes the turn, not paced themselves.
 */
export function sendCommits(flow: Pick<SessionFlow, 'afterAppend'>, send: (frame: string) => void): (packet: { seq: number }) => void {
  return (packet) => {
    const frames = flow.afterAppend(packet.seq);
    if (frames) for (const frame of frames) send(frame);
  };
}
