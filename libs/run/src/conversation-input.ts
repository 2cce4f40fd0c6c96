import { ConversationPlayer, type PlayerOptions, VOICED_DBFS, VOICE_ACTIVITY_DEFAULTS, type VoiceActivitySettings, MODEL_DONE_SILENCE_MS, ModelPlayout, readConversation, readWavAs, UTTERANCE_SAMPLE_THRESHOLD, utteranceOf, type ConversationScript, type Utterance, type WavConversion } from '@duplex-bench/audio';
import type { BehaviourOptions } from '@duplex-bench/metrics';

export interface ConversationSettings {
  conversation: string;
  packet_ms: number;
  sample_rate: number;
  /** Each session's input, s: the script starts again until it ends, its last step cut. Unused when played once. */
  duration_s: number;
  /**
   * `run --conversation` without `--duration`: each session plays the script once, to its own end
   * (at most `passBoundS`), instead of for `duration_s`.
   */
  conversation_once?: boolean;
  /** A stop not seen within this of a barge-in is `no_stop`, s. */
  max_stop_s: number;
  /** A span in a pause counts as a takeover from this long, ms. */
  takeover_min_ms: number;
}

/** What run.json records of a conversation: the script, each file as it was read, and how speech is told. */
export interface ConversationRecord {
  name: string;
  file: string;
  steps: number;
  files: Array<{ file: string; duration_ms: number } & WavConversion>;
  utterance_sample_threshold: number;
  voiced_dbfs: number;
  model_done_silence_ms: number;
  max_stop_s: number;
  takeover_min_ms: number;
  /** Where the model speech spans of the figures come from. */
  model_speech: string;
  /** The VAD the figures' model speech spans come from, as it was set. */
  voice_activity: VoiceActivitySettings;
}

/** The model speech spans the behaviour figures read, as every figure states its origin. */
export function modelSpeechOrigin(v: VoiceActivitySettings): string {
  return `client playout clock: each received audio chunk plays from its receipt, after the one before (a gap is silence); speech by ${v.engine} mode ${v.mode}, ${v.frame_ms} ms frames at ${v.sample_rate} Hz (other rates taken there by ${v.resampler === 'linear' ? 'linear interpolation up to 24 kHz, a windowed sinc above' : 'a windowed sinc'}), in the voice activity thread; spans closer than ${v.merge_ms} ms merged (a session whose VAD failed falls back to chunks above ${VOICED_DBFS} dBFS, said in sessions.jsonl)`;
}

/**
 * A run's conversation: the script and its utterances at the session's input rate, read once and
 * shared; each session gets its own player (its own place in the script) from `player`.
 */
export class ConversationInput {
  private constructor(
    readonly script: ConversationScript,
    private readonly utterances: Map<string, Utterance>,
    readonly record: ConversationRecord,
    private readonly settings: ConversationSettings,
  ) {}

  /** Reads `--conversation` and every WAV it says, mixed to mono and resampled to the input rate. */
  static async read(s: ConversationSettings): Promise<ConversationInput> {
    const script = await readConversation(s.conversation);
    const utterances = new Map<string, Utterance>();
    const files: ConversationRecord['files'] = [];
    const packet_samples = (s.sample_rate * s.packet_ms) / 1000;
    for (const step of script.steps) {
      if (step.kind !== 'say' || utterances.has(step.file)) continue;
      const { pcm, conversion } = await readWavAs(step.file, s.sample_rate);
      utterances.set(step.file, utteranceOf(step.file, pcm, packet_samples));
      files.push({ file: step.file, duration_ms: Math.round(((pcm.length / 2) * 1000) / s.sample_rate), ...conversion });
    }
    const record: ConversationRecord = {
      name: script.name,
      file: script.file,
      steps: script.steps.length,
      files,
      utterance_sample_threshold: UTTERANCE_SAMPLE_THRESHOLD,
      voiced_dbfs: VOICED_DBFS,
      model_done_silence_ms: MODEL_DONE_SILENCE_MS,
      max_stop_s: s.max_stop_s,
      takeover_min_ms: s.takeover_min_ms,
      model_speech: modelSpeechOrigin(VOICE_ACTIVITY_DEFAULTS),
      voice_activity: { ...VOICE_ACTIVITY_DEFAULTS },
    };
    return new ConversationInput(script, utterances, record, s);
  }

  /**
   * A new session's input: the script from its first step, on the session's clock, for `duration_s`;
   * `once`, one pass through it, at most `duration_s`. By default the run's: played once to its own
   * end, bounded by `passBoundS` (`conversation_once`), else for the run's `duration_s`.
   */
  player(now_s: () => number, duration_s = this.sessionBoundS(), options: PlayerOptions = { once: this.settings.conversation_once === true }): ConversationPlayer {
    const s = this.settings;
    return new ConversationPlayer(this.script, this.utterances, s.packet_ms, s.sample_rate, duration_s, new ModelPlayout(), now_s, options);
  }

  /** The longest a session of the run streams, s: one pass's bound when it plays the script once, else the run's `duration_s`. */
  sessionBoundS(): number {
    return this.settings.conversation_once === true ? this.passBoundS() : this.settings.duration_s;
  }

  /**
   * The longest one pass through the script can take, s: each utterance's packets, each silence,
   * each listen to its max_s, and a packet more per listen and at the end (a listen timed from a
   * late tick can take one packet more). A session played `once` is given this as its length.
   */
  passBoundS(): number {
    const { packet_ms } = this.settings;
    let packets = 1;
    for (const step of this.script.steps) {
      if (step.kind === 'say') packets += (this.utterances.get(step.file) as Utterance).packets.length;
      else if (step.kind === 'silence') packets += Math.ceil(step.ms / packet_ms);
      else packets += Math.ceil((step.max_s * 1000) / packet_ms) + 1;
    }
    return (packets * packet_ms) / 1000;
  }

  /** The bounds each session reads its behaviour with. */
  behaviour(): BehaviourOptions {
    const steps = this.script.steps;
    return {
      max_stop_s: this.settings.max_stop_s,
      takeover_min_ms: this.settings.takeover_min_ms,
      listen_max_s: (i) => {
        const step = steps[i];
        return step && step.kind === 'listen' ? step.max_s : Infinity;
      },
    };
  }

  /** What each behaviour figure is measured from, for the summary. */
  origins(): Record<string, string> {
    const user = "user speech: the send start of the packet holding an utterance's first (last) speech-level sample plus its offset in it";
    return {
      response_latency_ms: `${user} → the start of the model's next speech span (${this.record.model_speech}); client monotonic clock`,
      stop_latency_ms: `a barge-in's first speech-level sample → the end of the model speech span playing then; client monotonic clock`,
      cancel_latency_ms: "a barge-in's first speech-level sample → the receipt of the dialect's cancel evidence (response done with status cancelled, or listen)",
      pause_takeover_rate: `pauses (silence_ms, expect hold) in which a model speech span of at least ${this.settings.takeover_min_ms} ms starts`,
      backchannel_yield_rate: 'backchannels (expect continue) heard while the model spoke, after which its span ends within 1 s of their end and none starts within 1 s',
      overlap_ms: 'per session: user speech under model speech',
    };
  }
}
