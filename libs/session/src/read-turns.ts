import type { ConversationPlayer, VoiceSession } from '@duplex-bench/audio';
import { overlapMs, sessionSpeech, sessionTurns, type BehaviourOptions } from '@duplex-bench/metrics';
import type { SessionResult } from './result';

const DEFAULT_BEHAVIOUR: BehaviourOptions = { max_stop_s: 3, takeover_min_ms: 500, listen_max_s: () => 15 };

/**
 * A conversation's behaviour events, read once the session is over (at `end_s`): from what it
 * played, the model's speech on the playout clock (the VAD's spans; the live estimate's without a
 * voice thread, or when the VAD failed, said in `speech_spans`) and the dialect's response ends.
 */
export async function readTurns(
  result: SessionResult,
  player: ConversationPlayer,
  o: { id: string; origin_s: number; end_s: number; voice: VoiceSession | null; behaviour?: BehaviourOptions },
): Promise<void> {
  player.endSession(o.end_s);
  let spans = player.playout.spans();
  let source: 'vad' | 'energy' = 'energy';
  if (o.voice) {
    try {
      spans = await o.voice.end();
      source = 'vad';
    } catch (err) {
      result.message = `${result.message ? `${result.message}; ` : ''}${(err as Error).message}: figures from the live energy estimate`;
    }
  }
  const options = o.behaviour ?? DEFAULT_BEHAVIOUR;
  result.turns = sessionTurns(o.id, player.steps, spans, player.responseEnds, o.origin_s, options);
  result.overlap_ms = overlapMs(player.steps, spans);
  result.speech = sessionSpeech(o.id, player.steps, spans, { starts: player.responseStarts, ends: player.responseEnds }, o.origin_s, source);
  result.conversation = { passes: (player.steps.at(-1)?.pass ?? 0) + 1, steps: player.steps.length, speech_spans: source };
}
