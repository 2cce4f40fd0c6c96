import { join } from 'node:path';
import { readWavAs } from './wav';

/** Samples above this magnitude (about -40 dBFS) bound an utterance: its first and last are where it starts and ends. */
export const UTTERANCE_THRESHOLD = 300;

/** A committed espeak-ng utterance (libs/audio/speech) at `rate`. */
export async function speech(name: string, rate: number): Promise<Buffer> {
  return (await readWavAs(join(__dirname, '..', 'speech', `${name}.wav`), rate)).pcm;
}

/**
 * A signal of utterances (by name) and silences (ms) in order, at `rate`, with each utterance's
 * known bounds: its first and last sample over UTTERANCE_THRESHOLD, placed at its offset.
 */
export async function conversation(rate: number, plan: Array<string | number>): Promise<{ pcm: Buffer; bounds: Array<{ start_ms: number; end_ms: number }> }> {
  const parts: Buffer[] = [];
  const bounds: Array<{ start_ms: number; end_ms: number }> = [];
  let at = 0;
  for (const step of plan) {
    const pcm = typeof step === 'number' ? Buffer.alloc(Math.round((step * rate) / 1000) * 2) : await speech(step, rate);
    if (typeof step === 'string') {
      let first = -1;
      let last = -1;
      for (let i = 0; i < pcm.length / 2; i++) {
        if (Math.abs(pcm.readInt16LE(i * 2)) <= UTTERANCE_THRESHOLD) continue;
        if (first < 0) first = i;
        last = i;
      }
      bounds.push({ start_ms: ((at + first) * 1000) / rate, end_ms: ((at + last + 1) * 1000) / rate });
    }
    parts.push(pcm);
    at += pcm.length / 2;
  }
  return { pcm: Buffer.concat(parts), bounds };
}

/** White noise (uniform, seeded) at `dbfs` RMS, as PCM16 LE. */
export function whiteNoise(dbfs: number, rate: number, seconds: number, seed = 1): Buffer {
  const n = Math.round(rate * seconds);
  const pcm = Buffer.alloc(n * 2);
  const peak = 32768 * 10 ** (dbfs / 20) * Math.sqrt(3);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    pcm.writeInt16LE(Math.round(peak * (2 * (x / 2147483648) - 1)), i * 2);
  }
  return pcm;
}
