/**
 * Model speech on received audio (DESIGN, "Conversations"): the WebRTC VAD (libfvad, run from
 * @echogarden/fvad-wasm) decides each frame, and spans closer than merge_ms are merged, as
 * Full-Duplex-Bench v1.5 merges model spans. Offline or in a worker, never on the event loop;
 * the loop's own cheap estimate is pcm16Dbfs.
 */
import { FVAD_PACKAGE, FVAD_VERSION, FvadDetector, VoiceActivityError } from './fvad';
import { pcm16Samples } from './level';
import { LinearResampler, Resampler, VAD_QUALITY, linearKeepsVadBand } from './resample';

/** How model speech was decided, as run.json records it. */
export interface VoiceActivitySettings {
  engine: string;
  engine_version: string;
  /** libfvad's aggressiveness: 0 calls the most audio speech, 3 the least. */
  mode: 0 | 1 | 2 | 3;
  frame_ms: 10 | 20 | 30;
  /** The rate the VAD runs at; other audio is resampled to it. */
  sample_rate: 8000 | 16000 | 32000 | 48000;
  /**
   * How other rates reach sample_rate: 'linear' interpolates where its aliases land above the 4 kHz
   * libfvad reads (to 16 kHz: inputs up to 24,000 Hz) and uses the short windowed sinc (VAD_QUALITY)
   * elsewhere; 'sinc' always uses the sinc.
   */
  resampler: 'linear' | 'sinc';
  /** How long libfvad goes on calling frames speech after speech ends; taken off each span's end. */
  hangover_ms: number;
  /** Spans whose gap is shorter than this are one span. */
  merge_ms: number;
  /** Spans shorter than this, after merging, are dropped (a click is not speech). */
  min_span_ms: number;
}

/**
 * libfvad's hangover after a burst of speech of 60 ms or more, in frames, by frame length 10/20/30 ms
 * (vad_core.c: kOverHangMax2 of modes 0-1 and of modes 2-3). Measured on the spec's utterances, span
 * ends came 84-99 ms late in mode 3 with 10 ms frames, 144-159 ms in mode 0, before this is taken off.
 */
const HANGOVER_FRAMES = { low: [14, 7, 5], high: [9, 5, 3] };

/** The hangover libfvad adds in `mode` with frames of `frame_ms`, in ms. */
export function fvadHangoverMs(mode: 0 | 1 | 2 | 3, frame_ms: 10 | 20 | 30): number {
  return (mode < 2 ? HANGOVER_FRAMES.low : HANGOVER_FRAMES.high)[frame_ms / 10 - 1] * frame_ms;
}

/**
 * Settings with `changes` over the defaults; hangover_ms follows mode and frame_ms unless given.
 * The defaults were chosen on the committed espeak-ng utterances at 16, 22.05 and 24 kHz
 * (voice-activity.spec.ts): every mode finds the same spans there, and mode 3 with 10 ms frames
 * places their bounds closest (worst 9 ms, against 19 ms with 20 or 30 ms frames) while calling
 * the least noise speech (none in -60 dBFS white noise, where modes 0-2 call a frame). 16 kHz is
 * libfvad's common rate (it works at 8 kHz inside, after a half-band split of its own that is
 * cheaper than ours); 22.05 and 24 kHz reach it by linear interpolation, which finds the same spans
 * as the windowed sinc to 8 kHz at 0.42-0.47x of the CPU (LinearResampler, tools/bench/vad.ts).
 * min_span_ms 50: at the onset of noise at -50 to -30 dBFS libfvad calls its first frames speech
 * while its noise model settles, which leaves
 * 10 ms spans once the hangover is off (15 of 15 runs at -50 dBFS); spoken words last far longer.
 */
export function voiceActivitySettings(changes: Partial<VoiceActivitySettings> = {}): VoiceActivitySettings {
  const mode = changes.mode ?? 3;
  const frame_ms = changes.frame_ms ?? 10;
  return {
    engine: FVAD_PACKAGE,
    engine_version: FVAD_VERSION,
    sample_rate: 16000,
    resampler: 'linear',
    merge_ms: 500,
    min_span_ms: 50,
    ...changes,
    mode,
    frame_ms,
    hangover_ms: changes.hangover_ms ?? fvadHangoverMs(mode, frame_ms),
  };
}

/** The settings speechSpans and SpeechDetector use unless told. */
export const VOICE_ACTIVITY_DEFAULTS: Readonly<VoiceActivitySettings> = Object.freeze(voiceActivitySettings());

/** A span of speech, in ms from the start of the audio. */
export interface SpeechSpan {
  start_ms: number;
  end_ms: number;
}

function check(s: VoiceActivitySettings): void {
  const bad = (what: string) => new VoiceActivityError(`voice activity settings: ${what}`, { settings: s });
  if (![0, 1, 2, 3].includes(s.mode)) throw bad(`mode ${s.mode} is not 0-3`);
  if (![10, 20, 30].includes(s.frame_ms)) throw bad(`frame_ms ${s.frame_ms} is not 10, 20 or 30`);
  if (![8000, 16000, 32000, 48000].includes(s.sample_rate)) throw bad(`sample_rate ${s.sample_rate} is not 8000, 16000, 32000 or 48000`);
  if (s.resampler !== 'linear' && s.resampler !== 'sinc') throw bad(`resampler ${String(s.resampler)} is not linear or sinc`);
  if (!(s.merge_ms >= 0) || !(s.min_span_ms >= 0) || !(s.hangover_ms >= 0)) throw bad('merge_ms, min_span_ms and hangover_ms are ms ≥ 0');
}

/** Received audio in, chunk by chunk in order; its speech spans out at the end. */
export class SpeechDetector {
  private readonly resampler: Resampler | undefined;
  private readonly linear: LinearResampler | undefined;
  private readonly frame: Int16Array;
  private filled = 0;
  private frames = 0;
  /** An odd byte left over from the last chunk: the first half of a sample. */
  private carry: number | undefined;
  /** The voiced frames in a row so far, as libfvad called them. */
  private run: SpeechSpan | undefined;
  /** The span being merged into, hangover taken off. */
  private open: SpeechSpan | undefined;
  private readonly spans: SpeechSpan[] = [];

  private constructor(
    private readonly vad: FvadDetector,
    readonly input_rate: number,
    readonly settings: Readonly<VoiceActivitySettings>,
  ) {
    this.frame = new Int16Array(vad.frame_samples);
    const to = settings.sample_rate;
    if (input_rate === to) return;
    if (settings.resampler === 'linear' && linearKeepsVadBand(input_rate, to)) this.linear = new LinearResampler(input_rate, to);
    else this.resampler = new Resampler(input_rate, to, VAD_QUALITY);
  }

  /** A detector for PCM16 mono at `input_rate`. */
  static async open(input_rate: number, settings: Readonly<VoiceActivitySettings> = VOICE_ACTIVITY_DEFAULTS): Promise<SpeechDetector> {
    check(settings);
    if (!(Number.isInteger(input_rate) && input_rate > 0)) throw new VoiceActivityError(`input rate ${input_rate} Hz is not a positive whole number`);
    const vad = await FvadDetector.open(settings.sample_rate, settings.mode, (settings.sample_rate * settings.frame_ms) / 1000);
    return new SpeechDetector(vad, input_rate, settings);
  }

  /** The next received PCM16 LE bytes, of any length. */
  push(chunk: Buffer): void {
    let bytes = chunk;
    if (this.carry !== undefined) {
      bytes = Buffer.concat([Buffer.from([this.carry]), chunk]);
      this.carry = undefined;
    }
    const n = bytes.length >> 1;
    if (bytes.length % 2 === 1) this.carry = bytes[bytes.length - 1];
    const samples = pcm16Samples(bytes.subarray(0, n * 2));
    if (this.linear) return this.takeAll(this.linear.push(samples));
    if (!this.resampler) return this.takeAll(samples);
    const input = new Float32Array(n);
    for (let i = 0; i < n; i++) input[i] = samples[i] / 32768;
    this.takeFloats(this.resampler.push(input));
  }

  /** The speech spans of all the audio pushed, merged; frees the detector. A last part-frame is not judged. */
  end(): SpeechSpan[] {
    if (this.resampler) this.takeFloats(this.resampler.end());
    this.vad.close();
    this.endRun();
    if (this.open) this.close(this.open);
    this.open = undefined;
    return this.spans;
  }

  private takeFloats(samples: Float32Array): void {
    for (let i = 0; i < samples.length; i++) {
      const v = Math.round(samples[i] * 32768);
      this.take(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
    }
  }

  /** Fills frames from `samples`, a frame's worth at a time, judging each as it fills. */
  private takeAll(samples: Int16Array): void {
    for (let at = 0; at < samples.length; ) {
      const n = Math.min(this.frame.length - this.filled, samples.length - at);
      this.frame.set(samples.subarray(at, at + n), this.filled);
      this.filled += n;
      at += n;
      if (this.filled === this.frame.length) this.judge();
    }
  }

  private take(sample: number): void {
    this.frame[this.filled++] = sample;
    if (this.filled === this.frame.length) this.judge();
  }

  /** The frame is full: libfvad judges it. */
  private judge(): void {
    this.filled = 0;
    const start_ms = this.frames * this.settings.frame_ms;
    this.frames += 1;
    if (!this.vad.isSpeech(this.frame)) {
      this.endRun();
    } else if (this.run) {
      this.run.end_ms = start_ms + this.settings.frame_ms;
    } else {
      this.run = { start_ms, end_ms: start_ms + this.settings.frame_ms };
    }
  }

  /** A run of voiced frames is over: its hangover off, it joins the open span or starts the next. */
  private endRun(): void {
    if (!this.run) return;
    const { start_ms, end_ms } = this.run;
    this.run = undefined;
    const span = { start_ms, end_ms: Math.max(start_ms + this.settings.frame_ms, end_ms - this.settings.hangover_ms) };
    if (this.open && span.start_ms - this.open.end_ms < this.settings.merge_ms) {
      this.open.end_ms = Math.max(this.open.end_ms, span.end_ms);
      return;
    }
    if (this.open) this.close(this.open);
    this.open = span;
  }

  private close(span: SpeechSpan): void {
    if (span.end_ms - span.start_ms >= this.settings.min_span_ms) this.spans.push(span);
  }
}

/** The speech spans in `pcm16` (mono PCM16 LE at `sample_rate`), resampled to the VAD's rate when needed. */
export async function speechSpans(pcm16: Buffer, sample_rate: number, settings: Readonly<VoiceActivitySettings> = VOICE_ACTIVITY_DEFAULTS): Promise<SpeechSpan[]> {
  const d = await SpeechDetector.open(sample_rate, settings);
  d.push(pcm16);
  return d.end();
}
