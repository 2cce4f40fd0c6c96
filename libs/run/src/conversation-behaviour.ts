import { VoiceThread } from '@duplex-bench/audio';
import { BehaviourRecorder, type BehaviourParts, type BehaviourSummary, type SessionSpeech, type TurnRecord } from '@duplex-bench/metrics';
import { jsonLines } from '@duplex-bench/results';
import type { SessionContext } from '@duplex-bench/session';
import type { ConversationInput } from './conversation-input';

/** What a run's conversation sessions share: the voice activity thread, and what each session's context gains of the conversation. */
export interface ConversationHearing {
  /** Finds the model's speech in every session's received audio, off the event loop; the caller closes it. */
  thread: VoiceThread;
  /** The bounds the behaviour figures are read with, and each session's part of the thread. */
  context: Required<Pick<SessionContext, 'behaviour' | 'voice'>>;
}

/**
 * Starts the voice activity thread of a conversation's sessions. A thread that does not start is
 * said through `fail` and gives null: the figures would have no model speech to read, so the
 * caller ends before anything else starts.
 */
export async function hearConversationOr(conversation: ConversationInput, fail: (message: string) => void): Promise<ConversationHearing | null> {
  let thread: VoiceThread;
  try {
    thread = await VoiceThread.start(conversation.record.voice_activity);
  } catch (err) {
    fail((err as Error).message);
    return null;
  }
  return { thread, context: { behaviour: conversation.behaviour(), voice: (id) => thread.session(id) } };
}

/** What a session's result, or a recorded sample's stored record, keeps of its conversation. */
export interface ConversationOutcome {
  turns?: TurnRecord[];
  overlap_ms?: number;
  speech?: SessionSpeech;
}

/** A conversation's figures pooled over sessions. */
export interface BehaviourFigures {
  /** The summary's `behaviour` block, each figure with its origin. */
  summary: BehaviourSummary;
  /** The same, encoded, for `merge` (samples.msgpack's `behaviour`). */
  parts: BehaviourParts;
  /** `turns.jsonl`: every session's behaviour events, in the order of `sessions`. */
  turns_jsonl: string;
  /** `speech.jsonl`: every session's steps, model speech spans and response events, in the same order. */
  speech_jsonl: string;
}

/** Pools the behaviour events of `sessions` (a run's results, or a recording's stored samples); one with no events adds nothing. */
export function behaviourFigures(conversation: ConversationInput, sessions: ConversationOutcome[]): BehaviourFigures {
  const recorder = new BehaviourRecorder(conversation.origins());
  for (const s of sessions) if (s.turns) recorder.add(s.turns, s.overlap_ms ?? 0);
  return {
    summary: recorder.summary(),
    parts: recorder.parts(),
    turns_jsonl: jsonLines(sessions.flatMap((s) => s.turns ?? [])),
    speech_jsonl: jsonLines(sessions.flatMap((s) => (s.speech ? [s.speech] : []))),
  };
}
