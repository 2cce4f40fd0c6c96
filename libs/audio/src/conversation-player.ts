import type { ConversationScript, ConversationStep } from './conversation-script';
import { pcm16BytesPerMs, type PacketSource } from './packets';
import { ModelPlayout } from './playout';

/** A sample is speech-level when its magnitude passes this (1% of full scale): it bounds an utterance. */
export const UTTERANCE_SAMPLE_THRESHOLD = 328;

/** A listen ends `until: model_done` once this much played audio followed the model's last speech, ms. */
export const MODEL_DONE_SILENCE_MS = 500;

/** An utterance ready to stream: its packets as base64, and where its speech starts and ends in it. */
export interface Utterance {
  file: string;
  packets: Buffer[];
  samples: number;
  /** First and last sample at speech level (UTTERANCE_SAMPLE_THRESHOLD), from 0. */
  first_voiced: number;
  last_voiced: number;
}

/** `pcm` (PCM16 LE mono) cut into packets of `packet_samples`, the last one padded with silence. */
export function utteranceOf(file: string, pcm: Buffer, packet_samples: number): Utterance {
  const samples = pcm.length >> 1;
  let first_voiced = -1;
  let last_voiced = -1;
  for (let i = 0; i < samples; i++) {
    if (Math.abs(pcm.readInt16LE(i * 2)) >= UTTERANCE_SAMPLE_THRESHOLD) {
      if (first_voiced < 0) first_voiced = i;
      last_voiced = i;
    }
  }
  if (first_voiced < 0) first_voiced = last_voiced = 0;
  const packets: Buffer[] = [];
  for (let at = 0; at < samples; at += packet_samples) {
    const packet = Buffer.alloc(packet_samples * 2);
    pcm.copy(packet, 0, at * 2, Math.min(pcm.length, (at + packet_samples) * 2));
    packets.push(Buffer.from(packet.toString('base64'), 'latin1'));
  }
  return { file, packets, samples, first_voiced, last_voiced };
}

/** What happened at one step of one pass through the script; times are seconds on the session's clock. */
export interface StepRecord {
  /** Pass through the script, from 0 (the script starts again when it ends before the session does). */
  pass: number;
  /** Index of the step in the script, from 0. */
  step: number;
  kind: ConversationStep['kind'];
  expect?: 'stop' | 'hold' | 'continue';
  /** Send start of the step's first packet. */
  start_s: number;
  /** Send start of the packet after its last one; null while it runs or when the session ended in it. */
  end_s: number | null;
  /** say: the utterance's first and last speech-level sample, at the send start of its packet plus its offset in it. */
  speech_start_s?: number;
  speech_end_s?: number;
  /** listen: what ended it (its trigger, its max_s bound, or the end of the session). */
  ended_by?: 'trigger' | 'max_s' | 'session_end';
  /** The session ended before the step did. */
  cut?: boolean;
}

/** Evidence the dialect gives of how a response ended, seconds on the session's clock. */
export interface ResponseEnd {
  t_s: number;
  status?: string;
}

/** The dialect said a response started (`response.created` received), seconds on the session's clock: for the session's timeline. */
export interface ResponseStart {
  t_s: number;
}

/** How a session plays its script. */
export interface PlayerOptions {
  /**
   * Play the script once: the input ends at the packet boundary where its last step ends
   * (`inputOverAt`), and `duration_s` is only a bound (`ConversationInput.passBoundS`).
   */
  once?: boolean;
}

/**
 * A conversation as a session's input: each packet, when its tick fires, is the next slice of an
 * utterance, or silence; steps switch at packet boundaries, so the cadence never changes. A
 * `listen` ends at the first packet boundary where its trigger holds on what the user has heard so
 * far (the playout of the model's audio) or its bound passed. The script starts again when it ends
 * before `duration_s`, unless it plays `once`. Each session has its own player: it keeps the
 * session's state.
 */
export class ConversationPlayer implements PacketSource {
  readonly packet_count: number;
  readonly total_bytes: number;
  readonly steps: StepRecord[] = [];
  readonly responseEnds: ResponseEnd[] = [];
  readonly responseStarts: ResponseStart[] = [];
  private readonly full_bytes: number;
  private readonly tail_bytes: number;
  private readonly silence: Buffer;
  private readonly tailSilence: Buffer;
  private pass = 0;
  private index = -1;
  private current: StepRecord | null = null;
  /** Packets of the current step sent so far. */
  private sent = 0;
  private lastResponseEnd_s = -Infinity;
  private readonly once: boolean;
  /** Played once, its last step is over: the input ended before packet `over_at`. */
  private over_at: number | null = null;
  /** The packet whose send start `inputOverAt` read, and that time: packetBase64 decides on the same. */
  private asked_seq = -1;
  private asked_t_s = 0;

  constructor(
    private readonly script: ConversationScript,
    private readonly utterances: ReadonlyMap<string, Utterance>,
    readonly packet_ms: number,
    readonly sample_rate: number,
    duration_s: number,
    readonly playout: ModelPlayout,
    private readonly now_s: () => number,
    options: PlayerOptions = {},
  ) {
    this.once = options.once === true;
    this.full_bytes = pcm16BytesPerMs(sample_rate) * packet_ms;
    this.total_bytes = Math.round((duration_s * 1000 * pcm16BytesPerMs(sample_rate)) / 2) * 2;
    const whole = Math.floor(this.total_bytes / this.full_bytes);
    this.tail_bytes = this.total_bytes - whole * this.full_bytes;
    this.packet_count = whole + (this.tail_bytes > 0 ? 1 : 0);
    this.silence = Buffer.from(Buffer.alloc(this.full_bytes).toString('base64'), 'latin1');
    this.tailSilence = Buffer.from(Buffer.alloc(this.tail_bytes).toString('base64'), 'latin1');
    for (const step of script.steps) if (step.kind === 'say' && !utterances.has(step.file)) throw new RangeError(`no utterance loaded for ${step.file}`);
  }

  packetBytes(seq: number): number {
    return seq < this.packet_count - 1 || this.tail_bytes === 0 ? this.full_bytes : this.tail_bytes;
  }

  /** The dialect said a response started; no step keys on it, the session's timeline shows it. */
  responseStarted(t_s: number): void {
    this.responseStarts.push({ t_s });
  }

  /** The dialect said a response ended (done, cancelled, the model kept listening). */
  responseEnded(t_s: number, status?: string): void {
    this.responseEnds.push(status === undefined ? { t_s } : { t_s, status });
    this.lastResponseEnd_s = t_s;
  }

  /**
   * Whether the input ends before packet `seq`, asked at its send start (before packetBase64): only
   * a script played once ends before packet_count, where its last step is over.
   */
  inputOverAt(seq: number): boolean {
    if (!this.once) return false;
    if (this.over_at === null) {
      const t_s = this.now_s();
      this.asked_seq = seq;
      this.asked_t_s = t_s;
      this.advance(t_s);
      if (this.over_at === null && this.index >= this.script.steps.length) this.over_at = seq;
    }
    return this.over_at !== null && seq >= this.over_at;
  }

  /** Packet `seq`, decided now: called once per packet, in order, at its send start. */
  packetBase64(seq: number): Buffer {
    const t_s = this.asked_seq === seq ? this.asked_t_s : this.now_s();
    this.advance(t_s);
    // Played once and over (a caller that did not ask inputOverAt): silence to the end.
    if (this.index >= this.script.steps.length) return seq === this.packet_count - 1 && this.tail_bytes > 0 ? this.tailSilence : this.silence;
    // A last packet shorter than the others is silence: the step it falls in is cut.
    const out = seq === this.packet_count - 1 && this.tail_bytes > 0 ? this.tailSilence : this.play(t_s);
    if (seq === this.packet_count - 1) this.endSession(t_s + this.packetBytes(seq) / pcm16BytesPerMs(this.sample_rate) / 1000);
    return out;
  }

  /** Ends the step in progress when the session stops: a step it cut is marked so. */
  endSession(end_s: number): void {
    const current = this.current;
    if (!current || current.end_s !== null) return;
    const step = this.script.steps[current.step];
    const whole = step.kind === 'say' ? this.sent >= this.utteranceOf(step).packets.length : step.kind === 'silence' ? this.sent >= Math.ceil(step.ms / this.packet_ms) : false;
    current.end_s = end_s;
    if (step.kind === 'listen') current.ended_by = 'session_end';
    if (!whole) current.cut = true;
  }

  private utteranceOf(step: ConversationStep & { kind: 'say' }): Utterance {
    return this.utterances.get(step.file) as Utterance;
  }

  /** Whether the current step is over at this packet boundary. */
  private stepOver(t_s: number): boolean {
    const current = this.current as StepRecord;
    const step = this.script.steps[current.step];
    if (step.kind === 'say') return this.sent >= this.utteranceOf(step).packets.length;
    if (step.kind === 'silence') return this.sent >= Math.ceil(step.ms / this.packet_ms);
    if (t_s - current.start_s >= step.max_s) {
      current.ended_by = 'max_s';
      return true;
    }
    const heard = step.until === 'model_speech' ? this.playout.speechPlayedMs(current.start_s, t_s) >= step.ms - 1e-6 : this.modelDone(current.start_s, t_s);
    if (heard) current.ended_by = 'trigger';
    return heard;
  }

  /**
   * The model's answer since `from_s` is over: its speech ended and MODEL_DONE_SILENCE_MS of played
   * audio followed with no speech, or the dialect said a response ended after it spoke.
   */
  private modelDone(from_s: number, t_s: number): boolean {
    if (this.playout.speechPlayedMs(from_s, t_s) <= 0) return false;
    if (this.lastResponseEnd_s > from_s && !this.playout.speakingAt(t_s)) return true;
    const end_s = this.playout.lastSpeechEndBefore(from_s, t_s);
    return end_s !== null && t_s - end_s >= MODEL_DONE_SILENCE_MS / 1000 && this.playout.playedUntil_s >= end_s + MODEL_DONE_SILENCE_MS / 1000;
  }

  /** The steps that are over at `t_s` end, and the next one starts (none after the last, played once). */
  private advance(t_s: number): void {
    while (this.index < this.script.steps.length && (!this.current || this.stepOver(t_s))) this.nextStep(t_s);
  }

  private nextStep(t_s: number): void {
    if (this.current) this.current.end_s = t_s;
    this.index++;
    if (this.index >= this.script.steps.length) {
      if (this.once) return;
      this.index = 0;
      this.pass++;
    }
    const step = this.script.steps[this.index];
    const record: StepRecord = { pass: this.pass, step: this.index, kind: step.kind, start_s: t_s, end_s: null };
    if ('expect' in step && step.expect) record.expect = step.expect;
    this.steps.push(record);
    this.current = record;
    this.sent = 0;
  }

  private play(t_s: number): Buffer {
    const current = this.current as StepRecord;
    const step = this.script.steps[current.step];
    const k = this.sent++;
    if (step.kind !== 'say') return this.silence;
    const u = this.utteranceOf(step);
    const packet_samples = this.full_bytes / 2;
    if (k === Math.floor(u.first_voiced / packet_samples)) current.speech_start_s = t_s + (u.first_voiced - k * packet_samples) / this.sample_rate;
    if (k === Math.floor(u.last_voiced / packet_samples)) current.speech_end_s = t_s + (u.last_voiced + 1 - k * packet_samples) / this.sample_rate;
    return u.packets[k];
  }
}
