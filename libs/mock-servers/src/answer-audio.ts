import { join } from 'node:path';
import { readWavAs, speechDir } from '@duplex-bench/audio';
import { voicedFrames } from './energy-vad';

/** The committed answer (tools/make-speech.sh): espeak-ng, 22,050 Hz mono PCM16, read at the output rate. */
const ANSWER_WAV = 'answer.wav';

/**
 * What the model mocks say: the committed answer.wav at the output rate, cut or looped to
 * `answer_ms`, with its voiced onset and offset computed once (10 ms energy frames, the input VAD's
 * rule), so the log can say when the first and last voiced sample went out.
 */
export interface AnswerAudio {
  rate: number;
  pcm: Buffer;
  samples: number;
  /** First sample of the first voiced frame. */
  onset_sample: number;
  /** End of the last voiced frame. */
  offset_sample: number;
  /** The end of the last voiced frame that ends at or before `cut` (a frame the cut falls in counts up to the cut); 0 if none. */
  voicedEndBefore(cut: number): number;
}

export function answerAudio(pcm: Buffer, rate: number): AnswerAudio {
  const { frame_samples, voiced } = voicedFrames(pcm, rate);
  const samples = pcm.length >> 1;
  const first = voiced.indexOf(true);
  const last = voiced.lastIndexOf(true);
  return {
    rate,
    pcm,
    samples,
    onset_sample: first < 0 ? samples : first * frame_samples,
    offset_sample: last < 0 ? 0 : Math.min(samples, (last + 1) * frame_samples),
    voicedEndBefore(cut: number): number {
      for (let f = Math.min(voiced.length, Math.ceil(cut / frame_samples)) - 1; f >= 0; f--) {
        if (voiced[f]) return Math.min(cut, (f + 1) * frame_samples);
      }
      return 0;
    },
  };
}

/** answer.wav at `rate`, cut or looped to `answer_ms`. */
export async function loadAnswerAudio(rate: number, answer_ms: number): Promise<AnswerAudio> {
  const { pcm: speech } = await readWavAs(join(speechDir(), ANSWER_WAV), rate);
  const bytes = Math.round((rate * answer_ms) / 1000) * 2;
  const pcm = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += speech.length) speech.copy(pcm, at, 0, Math.min(speech.length, bytes - at));
  return answerAudio(pcm, rate);
}
