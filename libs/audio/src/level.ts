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

/** RMS of PCM16 LE mono samples, in sample units (0 to 32,768); 0 for no samples. */
export function pcm16Rms(pcm16: Buffer): number {
  const n = pcm16.length >> 1;
  if (n === 0) return 0;
  let sum = 0;
  if (LITTLE_ENDIAN && pcm16.byteOffset % 2 === 0) {
    // An Int16Array over the bytes: 4 µs per 80 ms chunk at 22,050 Hz against 21 µs by
    // readInt16LE (tools/bench/vad.ts). A buffer at an odd offset takes the slow way.
    const samples = new Int16Array(pcm16.buffer, pcm16.byteOffset, n);
    for (let i = 0; i < n; i++) sum += samples[i] * samples[i];
  } else {
    for (let i = 0; i < n; i++) sum += pcm16.readInt16LE(i * 2) ** 2;
  }
  return Math.sqrt(sum / n);
}

/** The RMS level of PCM16 LE mono samples in dBFS (a full-scale square wave is 0); -Infinity for silence. */
export function pcm16Dbfs(pcm16: Buffer): number {
  return 20 * Math.log10(pcm16Rms(pcm16) / 32768);
}
