import { pcm16Samples } from '@duplex-bench/audio';

/**
 * "The user is speaking", decided by energy on the decoded input PCM, as a server VAD does. The
 * settings rest on the committed espeak-ng speech (libs/audio/speech, resampled to 16 and 24 kHz):
 * at −45 dBFS in 10 ms frames the longest silent gap inside one utterance is 210 ms (stop.wav,
 * "Wait, stop, please."; q3a 50 ms, the rest 30-50 ms), and every WAV ends with 320-330 ms of
 * silence, so two utterances said back to back are at least 320 ms apart. A hangover of 250 ms
 * merges the first and keeps the second apart, and stays under the shortest pause a test uses
 * (400 ms).
 */
export const ENERGY_VAD = {
  frame_ms: 10,
  /** A frame is voiced when its RMS reaches this, dB relative to full scale (32768). */
  threshold_dbfs: -45,
  /** Speech starts after this many voiced frames in a row; its start is the first of them. */
  onset_frames: 3,
  /** Speech ends after this much silence; its end is the end of its last voiced frame. */
  hangover_ms: 250,
} as const;

export type EnergyVadSettings = { readonly [K in keyof typeof ENERGY_VAD]: number };

/** An onset or an end, at a sample position counted from the start of the stream. */
export interface VadEdge {
  kind: 'start' | 'end';
  sample: number;
}

/** Sum of squares (in full-scale units²) a frame of `n` samples reaches when voiced. */
function voicedEnergy(n: number, threshold_dbfs: number): number {
  const rms = 32768 * 10 ** (threshold_dbfs / 20);
  return rms * rms * n;
}

/**
 * A streaming energy VAD over mono PCM16 at `rate`: push the input as it arrives (any chunking),
 * get onsets and ends at exact frame boundaries. An end is decided once the hangover has passed,
 * but placed at the end of the last voiced frame.
 */
export class EnergyVad {
  readonly frame_samples: number;
  private readonly voiced_energy: number;
  private readonly hangover_frames: number;
  private frame = 0;
  private sum = 0;
  private filled = 0;
  private run = 0;
  private speaking_ = false;
  /** Frame index after the last voiced frame while speaking. */
  private voicedEnd = 0;

  constructor(
    rate: number,
    private readonly settings: EnergyVadSettings = ENERGY_VAD,
  ) {
    this.frame_samples = Math.round((rate * settings.frame_ms) / 1000);
    this.voiced_energy = voicedEnergy(this.frame_samples, settings.threshold_dbfs);
    this.hangover_frames = Math.ceil(settings.hangover_ms / settings.frame_ms);
  }

  get speaking(): boolean {
    return this.speaking_;
  }

  push(pcm: Buffer, on: (edge: VadEdge) => void): void {
    // Through an Int16Array, not readInt16LE per sample: a mock decodes every session's input.
    const samples = pcm16Samples(pcm);
    const n = samples.length;
    for (let i = 0; i < n; i++) {
      const v = samples[i];
      this.sum += v * v;
      if (++this.filled === this.frame_samples) this.endFrame(on);
    }
  }

  private endFrame(on: (edge: VadEdge) => void): void {
    const voiced = this.sum >= this.voiced_energy;
    const index = this.frame++;
    this.sum = 0;
    this.filled = 0;
    if (!this.speaking_) {
      this.run = voiced ? this.run + 1 : 0;
      if (this.run >= this.settings.onset_frames) {
        this.speaking_ = true;
        this.voicedEnd = index + 1;
        on({ kind: 'start', sample: (index + 1 - this.run) * this.frame_samples });
      }
      return;
    }
    if (voiced) this.voicedEnd = index + 1;
    else if (index + 1 - this.voicedEnd >= this.hangover_frames) {
      this.speaking_ = false;
      this.run = 0;
      on({ kind: 'end', sample: this.voicedEnd * this.frame_samples });
    }
  }
}

/** Which `frame_ms` frames of a whole PCM16 buffer are voiced, by the same rule. */
export function voicedFrames(pcm: Buffer, rate: number, settings: EnergyVadSettings = ENERGY_VAD): { frame_samples: number; voiced: boolean[] } {
  const frame_samples = Math.round((rate * settings.frame_ms) / 1000);
  const energy = voicedEnergy(frame_samples, settings.threshold_dbfs);
  const voiced: boolean[] = [];
  const n = pcm.length >> 1;
  for (let start = 0; start < n; start += frame_samples) {
    let sum = 0;
    const end = Math.min(n, start + frame_samples);
    for (let i = start; i < end; i++) {
      const v = pcm.readInt16LE(i * 2);
      sum += v * v;
    }
    // A short last frame is judged by its own length.
    voiced.push(sum >= (energy * (end - start)) / frame_samples);
  }
  return { frame_samples, voiced };
}
