/**
 * What a model mock in behaviour mode did, per session: the truth the probe's conversation figures
 * are checked against. Every `t_ms` is the mock's monotonic clock in ms (the host's
 * CLOCK_MONOTONIC, the probe's clock too); `input_ms` is a position in the session's received
 * input audio; `step` is the index in the conversation script's `steps` (from 0), when the mock
 * follows one; `answer` counts the session's answers from 0.
 */
export type BehaviourEvent =
  /** The user's speech as the mock heard it: `t_ms` is when that sample arrived (its append's arrival plus its offset in the append). */
  | { kind: 'speech_start'; t_ms: number; input_ms: number; utterance: number; step?: number }
  /**
   * `means`: what the mock took the silence after it for — the end of the user's turn, a pause
   * inside it, or the end of a backchannel (which hands no turn over).
   */
  | { kind: 'speech_end'; t_ms: number; input_ms: number; utterance: number; step?: number; means: 'turn_end' | 'pause' | 'backchannel' }
  /**
   * The first voiced sample of an answer went out (native: as the output plays on receipt, one unit
   * after another). `why`: after the end of the user's turn, a takeover of a pause, or the
   * client's `response.create`; `due_ms` is when it was meant to start (respond-after or
   * takeover-after past the user's speech end, capacity factor applied).
   */
  | { kind: 'answer_start'; t_ms: number; answer: number; why: 'turn_end' | 'takeover' | 'client_request'; due_ms: number; step?: number }
  /**
   * The last voiced sample of an answer went out; `silent_ms` is when its audio ended (the cut of a
   * stop, or the end of the answer audio). `why`: it was done, or it stopped for a barge-in, a
   * backchannel it yields to, the client's `response.cancel`, or the end of the session.
   */
  | { kind: 'answer_end'; t_ms: number; answer: number; silent_ms: number; why: 'done' | 'barge_in' | 'backchannel_yield' | 'client_cancel' | 'session_end' }
  /**
   * Speech heard during an answer that makes it stop: `t_ms` is its onset, `stop_at_ms` when the
   * answer is to go silent; absent when the server leaves the stop to the client (openai
   * `interrupt_response: false`): the answer goes on until its `response.cancel`.
   */
  | { kind: 'barge_in'; t_ms: number; answer: number; stop_at_ms?: number; step?: number }
  /** A backchannel (`expect: continue`) heard during an answer: yielded to (stops at `stop_at_ms`) or talked over. */
  | { kind: 'backchannel'; t_ms: number; answer: number; yields: boolean; stop_at_ms?: number; step?: number }
  /**
   * openai: the client's `conversation.item.truncate` of an answer's item, as it arrived;
   * `heard_ms` is the mock's own truth of the answer's audio played by then (what went out, less
   * what still waited to play on a speaker that plays on receipt), null for an answer no longer kept.
   */
  | { kind: 'truncate'; t_ms: number; answer: number; audio_end_ms: number; heard_ms: number | null }
  /** vllm-omni: the client's `playback.ack` of an answer's response, as it arrived, with `heard_ms` as for a truncate. */
  | { kind: 'playback_ack'; t_ms: number; answer: number; played_ms: number; heard_ms: number | null };

export interface BehaviourSessionLog {
  session: string;
  events: BehaviourEvent[];
  /** Events past the bound, counted and not kept. */
  events_not_kept: number;
}

/** Events kept per session; the rest are counted. */
export const EVENTS_KEPT_PER_SESSION = 512;

/** One session's log, bounded. */
export class BehaviourLog {
  readonly events: BehaviourEvent[] = [];
  events_not_kept = 0;

  constructor(readonly session: string) {}

  add(event: BehaviourEvent): void {
    if (this.events.length < EVENTS_KEPT_PER_SESSION) this.events.push(event);
    else this.events_not_kept++;
  }

  toJSON(): BehaviourSessionLog {
    return { session: this.session, events: this.events, events_not_kept: this.events_not_kept };
  }
}

/** ms on the clock, to the µs. */
export function clockMs(t_s: number): number {
  return Math.round(t_s * 1e6) / 1000;
}

/** What a behaviour mock's log says it did, as delays: the truth a conversation run's figures are set beside. */
export interface BehaviourDelays {
  /** Each answer's first voiced sample after the end of the turn it answered (`turn_end`), ms. */
  response_ms: number[];
  /** Each answer's last voiced sample after the onset of the barge-in that stopped it, ms. */
  stop_ms: number[];
}

/** The delays in the sessions' logs (a mock's stats `behaviour.sessions`), in log order. */
export function behaviourDelays(sessions: ReadonlyArray<Pick<BehaviourSessionLog, 'events'>>): BehaviourDelays {
  const response_ms: number[] = [];
  const stop_ms: number[] = [];
  for (const { events } of sessions) {
    let turnEnd: number | null = null;
    let bargeIn: number | null = null;
    for (const e of events) {
      if (e.kind === 'speech_end' && e.means === 'turn_end') turnEnd = e.t_ms;
      if (e.kind === 'answer_start' && e.why === 'turn_end' && turnEnd !== null) response_ms.push(e.t_ms - turnEnd);
      if (e.kind === 'barge_in') bargeIn = e.t_ms;
      if (e.kind === 'answer_end' && e.why === 'barge_in' && bargeIn !== null) stop_ms.push(e.t_ms - bargeIn);
    }
  }
  return { response_ms, stop_ms };
}
