import { readConversation, type ConversationScript } from '@duplex-bench/audio';
import { loadAnswerAudio } from './answer-audio';
import { BEHAVIOUR_DEFAULTS, type BehaviourOptions, type BehaviourSettings } from './behaviour-session';
import { ENERGY_VAD } from './energy-vad';

/** `MockServerOptions.behaviour`: any field turns behaviour mode on; the rest take their defaults. */
export type MockBehaviourOptions = Partial<BehaviourOptions> & {
  /** The conversation the probe follows (a built-in name, a YAML or JSON file, or the script read): the mock plays the other side. */
  conversation?: string | ConversationScript;
};

/** The settings a behaviour log states, beside its events. */
export interface BehaviourReportSettings extends BehaviourOptions {
  capacity_sessions: number | null;
  conversation: { name: string; file: string } | null;
  /** The input VAD (energy on the decoded input PCM). */
  vad: typeof ENERGY_VAD;
  /** Where the answer audio's first and last voiced samples lie in it, ms. */
  answer_voiced_ms: { onset: number; offset: number };
  output_sample_rate: number;
}

/** Reads the script and the answer audio at `output_rate`. Throws ConversationError for a bad script. */
export async function resolveBehaviour(options: MockBehaviourOptions, output_rate: number, load: () => number): Promise<BehaviourSettings> {
  const knobs: BehaviourOptions = { ...BEHAVIOUR_DEFAULTS };
  for (const key of Object.keys(BEHAVIOUR_DEFAULTS) as Array<keyof BehaviourOptions>) {
    const v = options[key];
    if (v === undefined) continue;
    if (typeof v === 'number' && !(Number.isFinite(v) && v >= 0 && (key !== 'answer_ms' || v > 0))) throw new RangeError(`behaviour ${key} must be a number of ms${key === 'answer_ms' ? ' above 0' : ' of 0 or more'}, got ${v}`);
    (knobs as unknown as Record<string, unknown>)[key] = v;
  }
  const script = options.conversation === undefined ? null : typeof options.conversation === 'string' ? await readConversation(options.conversation) : options.conversation;
  const answer = await loadAnswerAudio(output_rate, knobs.answer_ms);
  return { ...knobs, script, answer, load };
}

export function behaviourReportSettings(b: BehaviourSettings, capacity_sessions: number | undefined): BehaviourReportSettings {
  const { script, answer } = b;
  return {
    respond_after_ms: b.respond_after_ms,
    answer_ms: b.answer_ms,
    stop_after_ms: b.stop_after_ms,
    takeover_after_ms: b.takeover_after_ms,
    yield_on_backchannel: b.yield_on_backchannel,
    capacity_sessions: capacity_sessions ?? null,
    conversation: script ? { name: script.name, file: script.file } : null,
    vad: ENERGY_VAD,
    answer_voiced_ms: { onset: (answer.onset_sample / answer.rate) * 1000, offset: (answer.offset_sample / answer.rate) * 1000 },
    output_sample_rate: answer.rate,
  };
}
