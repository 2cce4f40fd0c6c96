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

/** Each base64 character's 6 bits (RFC 4648, standard alphabet); -1 for any other byte. */
const BASE64_VALUE = (() => {
  const t = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
})();

/**
 * Σ x² over the PCM16 LE samples that the base64 in text[start, end) encodes, read 8 characters
 * (3 samples) at a time with no copy; a group holding any other byte (the '=' padding at the end)
 * and what follows it are decoded by Buffer.
 */
function base64SquareSum(text: Uint8Array, start: number, end: number): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (let c = start; c + 8 <= end; c += 8) {
    const a = (BASE64_VALUE[text[c]] << 18) | (BASE64_VALUE[text[c + 1]] << 12) | (BASE64_VALUE[text[c + 2]] << 6) | BASE64_VALUE[text[c + 3]];
    const b = (BASE64_VALUE[text[c + 4]] << 18) | (BASE64_VALUE[text[c + 5]] << 12) | (BASE64_VALUE[text[c + 6]] << 6) | BASE64_VALUE[text[c + 7]];
    if (a < 0 || b < 0) {
      // The end of the base64 ('=' padding): the whole samples of what is left, decoded as Buffer does.
      const rest = Buffer.from(Buffer.from(text.buffer, text.byteOffset + c, end - c).toString('latin1'), 'base64');
      for (let i = 0; i + 1 < rest.length; i += 2) {
        const x = rest.readInt16LE(i);
        sum += x * x;
        count += 1;
      }
      break;
    }
    // Bytes a2 a1 a0 b2 b1 b0 (high to low within each group) are samples (a2|a1<<8), (a0|b2<<8), (b1|b0<<8).
    const s0 = ((((a >> 8) & 0xff) << 24) | ((a >> 16) << 16)) >> 16;
    const s1 = (((b >> 16) << 24) | ((a & 0xff) << 16)) >> 16;
    const s2 = (((b & 0xff) << 24) | (((b >> 8) & 0xff) << 16)) >> 16;
    sum += s0 * s0 + s1 * s1 + s2 * s2;
    count += 3;
  }
  return { sum, count };
}

/**
 * The level of base64 PCM16 LE, in dBFS, from four windows of 66 samples spread over the chunk
 * (the whole of a short one): what the loop's live estimate needs, read from the base64 text with
 * no decoding copy. An utterance is seconds long, so a chunk of speech has speech in its windows;
 * the VAD decides the final figures from every sample, off the loop.
 */
export function base64Dbfs(b64: Uint8Array): number {
  const n = b64.length;
  if (n <= LEVEL_WINDOWS * WINDOW_CHARS) return pcm16Dbfs(Buffer.from(Buffer.from(b64.buffer, b64.byteOffset, n).toString('latin1'), 'base64'));
  let sum = 0;
  let count = 0;
  for (let w = 0; w < LEVEL_WINDOWS; w++) {
    const start = Math.floor(((n - WINDOW_CHARS) * w) / (LEVEL_WINDOWS - 1) / 8) * 8;
    const part = base64SquareSum(b64, start, start + WINDOW_CHARS);
    sum += part.sum;
    count += part.count;
  }
  if (sum === 0) return -Infinity;
  return 10 * Math.log10(sum / count / (32768 * 32768));
}

/** 'A' repeated: the base64 of zero bytes, grown as longer chunks come. */
let zeroBase64 = Buffer.alloc(0);

/**
 * Whether base64 text decodes to zero bytes only (digital silence, what a native full-duplex model
 * sends between answers): every character 'A' but the '=' padding. A compare of the text, with no decoding.
 */
export function isZeroBase64(b64: Uint8Array): boolean {
  let n = b64.length;
  while (n > 0 && b64[n - 1] === 0x3d) n--;
  if (zeroBase64.length < n) zeroBase64 = Buffer.alloc(Math.max(n, 2 * zeroBase64.length), 'A');
  return zeroBase64.compare(b64, 0, n, 0, n) === 0;
}

/** Windows in which `firstVoicedMs` looks for the first voiced audio, ms. */
const VOICED_WINDOW_MS = 10;

/**
 * Where the first voiced audio in a chunk starts, ms from the chunk's start: the first 10 ms window
 * of its PCM16 samples (base64) whose RMS is at or above VOICED_DBFS, the level the conversation
 * mode takes for voiced output; null when none is (digital silence is told from the text alone).
 */
export function firstVoicedMs(b64: Uint8Array, sample_rate: number): number | null {
  if (isZeroBase64(b64)) return null;
  const samples = pcm16Samples(Buffer.from(Buffer.from(b64.buffer, b64.byteOffset, b64.length).toString('latin1'), 'base64'));
  const window = Math.max(1, Math.round((sample_rate * VOICED_WINDOW_MS) / 1000));
  const floor = 32768 * 10 ** (VOICED_DBFS / 20);
  for (let start = 0; start < samples.length; start += window) {
    const end = Math.min(samples.length, start + window);
    let sum = 0;
    for (let i = start; i < end; i++) sum += samples[i] * samples[i];
    if (Math.sqrt(sum / (end - start)) >= floor) return (start / sample_rate) * 1000;
  }
  return null;
}
