import type { SessionResult } from './session-result';
import type { RunSummary } from './summary';

/**
 * The summary's `conversation_once` block: `run --conversation` without `--duration`, each session
 * played the script once, to its own end. Its length was the script's, not a setting: the summary's
 * `duration_s` is `longest_input_s`, and this block says so.
 */
export interface ConversationOnceFigures {
  /** The longest one pass could take (each utterance, each silence, each listen to its max_s): every session's bound, s. */
  bound_s: number;
  /** Sessions that played the script to its end (completed). */
  completed: number;
  /** Their mean input, s; null when none did. */
  mean_input_s: number | null;
  /** The longest input any session streamed, s: the summary's duration_s. */
  longest_input_s: number;
}

export const CONVERSATION_ONCE_ORIGIN =
  'run --conversation without --duration: each session played the script once, to its own end (at most conversation_once.bound_s, every listen to its max_s); ' +
  'duration_s is the longest input a session streamed, packets sent x packet_ms (a dialect trailing silence included), seconds';

const ms = (s: number) => Math.round(s * 1000) / 1000;

/** The block from the sessions' results: input streamed = packets sent x `packet_ms`. */
export function conversationOnceFigures(results: ReadonlyArray<Pick<SessionResult, 'completed' | 'packets_sent'>>, packet_ms: number, bound_s: number): ConversationOnceFigures {
  const input_s = (r: Pick<SessionResult, 'packets_sent'>) => (r.packets_sent * packet_ms) / 1000;
  const whole = results.filter((r) => r.completed);
  return {
    bound_s: ms(bound_s),
    completed: whole.length,
    mean_input_s: whole.length > 0 ? ms(whole.reduce((sum, r) => sum + input_s(r), 0) / whole.length) : null,
    longest_input_s: ms(Math.max(0, ...results.map(input_s))),
  };
}

/** `summary` of a run whose sessions played the script once: its `duration_s` the longest input, the block beside it, and where it comes from. */
export function withConversationOnce(summary: RunSummary, results: ReadonlyArray<Pick<SessionResult, 'completed' | 'packets_sent'>>, packet_ms: number, bound_s: number): RunSummary {
  const once = conversationOnceFigures(results, packet_ms, bound_s);
  summary.duration_s = once.longest_input_s;
  summary.conversation_once = once;
  summary.measurement_origin = { ...summary.measurement_origin, duration_s: CONVERSATION_ONCE_ORIGIN };
  return summary;
}
