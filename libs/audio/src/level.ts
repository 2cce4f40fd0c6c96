/**
 * A cheap level estimate of one received chunk, for the event loop: the RMS of its samples in
 * dBFS. It tells sound from silence, not speech from noise; the VAD (voice-activity.ts) decides
 * speech off the loop. Cost: tools/bench/vad.ts.
 */
import { endianness } from 'node:os';

/**
 * Chunks at or above this level are "voiced" to the loop. Measured on the committed espeak-ng
 * utterances in 80 ms chunks at 22,050 Hz: whole chunks of speech sit at -42 to -13 dBFS (an
 * utterance's last part-chunk lower), espeak-ng's pauses are digital silence (-Infinity), and
 * -60 dBFS white noise measures -60 (level.spec.ts).
 */
export const VOICED_DBFS = -45;

/** Int16Array reads the host's byte order: the samples are read through one only on a little-endian host. */
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * The PCM16 LE samples of `pcm16` as an Int16Array: a view when the host is little-endian and the
 * offset even (4 µs per 80 ms chunk at 22,050 Hz against 21 µs by readInt16LE, tools/bench/vad.ts),
 * else a copy read sample by sample.
 */
export function pcm16Samples(pcm16: Buffer): Int16Array {
  const n = pcm16.length >> 1;
  if (LITTLE_ENDIAN && pcm16.byteOffset % 2 === 0) return new Int16Array(pcm16.buffer, pcm16.byteOffset, n);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = pcm16.readInt16LE(i * 2);
  return out;
}

/** RMS of PCM16 LE mono samples, in sample units (0 to 32,768); 0 for no samples. */
export function pcm16Rms(pcm16: Buffer): number {
  const samples = pcm16Samples(pcm16);
  const n = samples.length;
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / n);
}

/** The RMS level of PCM16 LE mono samples in dBFS (a full-scale square wave is 0); -Infinity for silence. */
export function pcm16Dbfs(pcm16: Buffer): number {
  return 20 * Math.log10(pcm16Rms(pcm16) / 32768);
}

/** Windows of a chunk the sampled level reads, and their length in base64 characters (8 = 3 samples, so each starts on a sample). */
const LEVEL_WINDOWS = 4;
const WINDOW_CHARS = 176;

/**
 * The level of base64 PCM16 LE, in dBFS, from four windows of 66 samples spread over the chunk
 * (the whole of a short one): what the loop's live estimate needs, without decoding every sample.
 * An utterance is seconds long, so a chunk of speech has speech in its windows; the VAD decides
 * the final figures from every sample, off the loop.
 */
export function base64Dbfs(b64: Uint8Array): number {
  const text = Buffer.from(b64.buffer, b64.byteOffset, b64.length);
  const n = text.length;
  if (n <= LEVEL_WINDOWS * WINDOW_CHARS) return pcm16Dbfs(Buffer.from(text.toString('latin1'), 'base64'));
  let sum = 0;
  let count = 0;
  for (let w = 0; w < LEVEL_WINDOWS; w++) {
    const start = Math.floor(((n - WINDOW_CHARS) * w) / (LEVEL_WINDOWS - 1) / 8) * 8;
    const pcm = Buffer.from(text.toString('latin1', start, start + WINDOW_CHARS), 'base64');
    for (let i = 0; i + 1 < pcm.length; i += 2) {
      const x = pcm.readInt16LE(i);
      sum += x * x;
    }
    count += pcm.length >> 1;
  }
  return sum === 0 ? -Infinity : 10 * Math.log10(sum / count / (32768 * 32768));
}
