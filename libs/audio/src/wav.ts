import { readFile } from 'node:fs/promises';
import { floatToPcm16, resampleAll } from './resample';

/** A WAV file this tool cannot read: the message names the file, what is accepted and what was found. */
export class AudioFormatError extends Error {
  override readonly name = 'AudioFormatError';
  readonly code = 'AUDIO_FORMAT';
  constructor(
    readonly file: string,
    readonly found: string,
    readonly expected: string,
  ) {
    super(`${file}: expected ${expected}, found ${found}`);
  }
}

export interface PcmFormat {
  sample_rate: number;
  channels: number;
  bits_per_sample: number;
}

/** What loading a WAV did to it, for run.json: the file's own format, and whether it was mixed or resampled. */
export interface WavConversion {
  file_rate: number;
  channels: number;
  bits_per_sample: number;
  format: 'pcm' | 'float';
  /** Converted to the rate asked for (band-limited; see resample.ts). */
  resampled: boolean;
  /** More than one channel, averaged to mono. */
  mixed: boolean;
}

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;
/** The 14 bytes after the format tag in every KSDATAFORMAT_SUBTYPE GUID (mmreg.h). */
const SUBTYPE_TAIL = Buffer.from('000000001000800000aa00389b71', 'hex');

/** What parseWavAs accepts, as its refusals say it. */
export const ACCEPTED_WAV = 'a PCM WAV (format 1: 8-bit unsigned or 16/24/32-bit signed; format 3: 32/64-bit float; or WAVE_FORMAT_EXTENSIBLE of these), any rate, any channels';

interface WavChunks extends PcmFormat {
  tag: number;
  data: Buffer;
}

function describe(f: PcmFormat & { tag: number }): string {
  return `${f.sample_rate} Hz, ${f.channels} channel(s), ${f.bits_per_sample}-bit, format tag ${f.tag}`;
}

/** The fmt and data chunks of a RIFF/WAVE file; `expected` is what the caller's refusals say it accepts. */
function readChunks(bytes: Buffer, file: string, expected: string): WavChunks {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') {
    throw new AudioFormatError(file, 'no RIFF/WAVE header', expected);
  }
  let format: (PcmFormat & { tag: number }) | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + size > bytes.length) throw new AudioFormatError(file, `a ${size}-byte fmt chunk`, expected);
      let tag = bytes.readUInt16LE(body);
      if (tag === EXTENSIBLE && size >= 40) {
        const subtype = bytes.readUInt16LE(body + 24);
        // Another GUID family (not a format tag) is left as EXTENSIBLE, which is refused.
        if (bytes.subarray(body + 26, body + 40).equals(SUBTYPE_TAIL)) tag = subtype;
      }
      format = {
        tag,
        channels: bytes.readUInt16LE(body + 2),
        sample_rate: bytes.readUInt32LE(body + 4),
        bits_per_sample: bytes.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new AudioFormatError(file, 'a data chunk before any fmt chunk', expected);
      // A streamed WAV's data size may run past the end (or be 0xFFFFFFFF): take what is there.
      return { ...format, data: bytes.subarray(body, Math.min(bytes.length, body + size)) };
    }
    offset = body + size + (size % 2);
  }
  throw new AudioFormatError(file, format ? 'no data chunk' : 'no fmt chunk', expected);
}

/** Reads the PCM samples of a mono 16-bit WAV at `expected_rate` held in `bytes`; anything else is refused. */
export function parseWavPcm16(bytes: Buffer, file: string, expected_rate = 16000): Buffer {
  const expected = `${expected_rate / 1000} kHz mono PCM16 WAV`;
  const wav = readChunks(bytes, file, expected);
  if (wav.tag !== PCM || wav.channels !== 1 || wav.bits_per_sample !== 16 || wav.sample_rate !== expected_rate) {
    throw new AudioFormatError(file, describe(wav), expected);
  }
  return wav.data.subarray(0, wav.data.length - (wav.data.length % 2));
}

/** readWavPcm16 on the file at `file`. */
export async function readWavPcm16(file: string, expected_rate = 16000): Promise<Buffer> {
  return parseWavPcm16(await readFile(file), file, expected_rate);
}

/** One sample as a float in [-1, 1), by format and width. */
function sampleReader(wav: WavChunks): ((b: Buffer, at: number) => number) | undefined {
  if (wav.tag === PCM) {
    if (wav.bits_per_sample === 8) return (b, at) => (b[at] - 128) / 128;
    if (wav.bits_per_sample === 16) return (b, at) => b.readInt16LE(at) / 32768;
    if (wav.bits_per_sample === 24) return (b, at) => b.readIntLE(at, 3) / 8388608;
    if (wav.bits_per_sample === 32) return (b, at) => b.readInt32LE(at) / 2147483648;
  } else if (wav.tag === FLOAT) {
    if (wav.bits_per_sample === 32) return (b, at) => b.readFloatLE(at);
    if (wav.bits_per_sample === 64) return (b, at) => b.readDoubleLE(at);
  }
  return undefined;
}

/** The samples of any PCM or float WAV in `bytes` as PCM16 LE mono at `target_rate`, and what was done to them. */
export function parseWavAs(bytes: Buffer, file: string, target_rate: number): { pcm: Buffer; conversion: WavConversion } {
  const wav = readChunks(bytes, file, ACCEPTED_WAV);
  const read = sampleReader(wav);
  if (!read || wav.channels < 1 || wav.sample_rate < 1) throw new AudioFormatError(file, describe(wav), ACCEPTED_WAV);
  const conversion: WavConversion = {
    file_rate: wav.sample_rate,
    channels: wav.channels,
    bits_per_sample: wav.bits_per_sample,
    format: wav.tag === FLOAT ? 'float' : 'pcm',
    resampled: wav.sample_rate !== target_rate,
    mixed: wav.channels > 1,
  };
  if (wav.tag === PCM && wav.bits_per_sample === 16 && !conversion.mixed && !conversion.resampled) {
    return { pcm: Buffer.from(wav.data.subarray(0, wav.data.length - (wav.data.length % 2))), conversion };
  }
  const width = wav.bits_per_sample / 8;
  const frame = width * wav.channels;
  const mono = new Float32Array(Math.floor(wav.data.length / frame));
  for (let i = 0; i < mono.length; i++) {
    let sum = 0;
    for (let c = 0; c < wav.channels; c++) sum += read(wav.data, i * frame + c * width);
    mono[i] = sum / wav.channels;
  }
  return { pcm: floatToPcm16(conversion.resampled ? resampleAll(mono, wav.sample_rate, target_rate) : mono), conversion };
}

/** parseWavAs on the file at `file`. */
export async function readWavAs(file: string, target_rate: number): Promise<{ pcm: Buffer; conversion: WavConversion }> {
  return parseWavAs(await readFile(file), file, target_rate);
}

/** A 16-bit mono PCM WAV file around `pcm`, for tests and reconstructed output. */
export function encodeWavPcm16(pcm: Buffer, sample_rate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(PCM, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sample_rate, 24);
  header.writeUInt32LE(sample_rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
