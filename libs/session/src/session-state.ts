/**
 * The states of one session, in order: it connects (again after a full server's refusal), shakes
 * hands, is ready, streams its input, ends it (held until it has played out, and until every
 * session's last packet went when the run holds them), drains the server's answer and closes in
 * the dialect's way (the flow's `end`), and is done. A fault in any state goes to `closing`: the
 * dialect's close after a failure, bounded.
 */
export type SessionState = 'idle' | 'connecting' | 'handshaking' | 'ready' | 'streaming' | 'ending_input' | 'draining' | 'closing' | 'done';

const NEXT: Record<SessionState, readonly SessionState[]> = {
  idle: ['connecting', 'done'],
  connecting: ['handshaking', 'closing', 'done'],
  handshaking: ['connecting', 'ready', 'closing', 'done'],
  ready: ['streaming', 'closing', 'done'],
  streaming: ['ending_input', 'closing'],
  ending_input: ['draining', 'closing'],
  draining: ['done', 'closing'],
  closing: ['done'],
  done: [],
};

/** The one transition function: `to` when it may follow `from`, else a thrown error (a bug, never a server's doing). */
export function transition(from: SessionState, to: SessionState): SessionState {
  if (!NEXT[from].includes(to)) throw new Error(`session state ${from} cannot go to ${to}`);
  return to;
}
