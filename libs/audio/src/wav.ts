import { readFile } from 'node:fs/promises';

/** A WAV file this tool cannot stream: the message names the file and what was found. */
export class AudioFormatError extends Error {
  override readonly name = 'AudioFormatError';
  readonly code = 'AUDIO_FORMAT';
  constructor(
    readonly file: string,
    readonly found: string,
    readonly expected_rate = 16000,
  ) {
    super(`${file}: expected ${expected_rate / 1000} kHz mono PCM16 WAV, found ${found}`);
  }
}

export interface PcmFormat {
  sample_rate: number;
  channels: number;
  bits_per_sample: number;
}

const PCM = 1;
const EXTENSIBLE = 0xfffe;

/** Reads the PCM samples of a mono 16-bit WAV at `expected_rate` held in `bytes`; anything else is refused. */
export function parseWavPcm16(bytes: Buffer, file: string, expected_rate = 16000): Buffer {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') {
    throw new AudioFormatError(file, 'no RIFF/WAVE header', expected_rate);
  }
  let format: (PcmFormat & { tag: number }) | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16) throw new AudioFormatError(file, `a ${size}-byte fmt chunk`, expected_rate);
      let tag = bytes.readUInt16LE(body);
      if (tag === EXTENSIBLE && size >= 40) tag = bytes.readUInt16LE(body + 24);
      format = {
        tag,
        channels: bytes.readUInt16LE(body + 2),
        sample_rate: bytes.readUInt32LE(body + 4),
        bits_per_sample: bytes.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new AudioFormatError(file, 'a data chunk before any fmt chunk', expected_rate);
      const found = `${format.sample_rate} Hz, ${format.channels} channel(s), ${format.bits_per_sample}-bit, format tag ${format.tag}`;
      if (format.tag !== PCM || format.channels !== 1 || format.bits_per_sample !== 16 || format.sample_rate !== expected_rate) {
        throw new AudioFormatError(file, found, expected_rate);
      }
      const end = Math.min(bytes.length, body + size);
      return bytes.subarray(body, end - ((end - body) % 2));
    }
    offset = body + size + (size % 2);
  }
  throw new AudioFormatError(file, format ? 'no data chunk' : 'no fmt chunk', expected_rate);
}

export async function readWavPcm16(file: string, expected_rate = 16000): Promise<Buffer> {
  return parseWavPcm16(await readFile(file), file, expected_rate);
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
