import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACCEPTED_WAV, AudioFormatError, encodeWavPcm16, parseWavAs, parseWavPcm16, readWavAs, readWavPcm16 } from './wav';

describe('WAV reading', () => {
  it('returns the samples of a 16 kHz mono PCM16 file', () => {
    const pcm = Buffer.from([1, 0, 2, 0, 3, 0]);
    expect(parseWavPcm16(encodeWavPcm16(pcm, 16000), 'a.wav')).toEqual(pcm);
  });

  it('refuses another rate, naming the file and what it found', () => {
    const wav = encodeWavPcm16(Buffer.alloc(8), 44100);
    expect(() => parseWavPcm16(wav, 'voice.wav')).toThrow('voice.wav: expected 16 kHz mono PCM16 WAV, found 44100 Hz, 1 channel(s), 16-bit');
    // The rate asked for is the one named (openai streams 24 kHz by default).
    expect(() => parseWavPcm16(encodeWavPcm16(Buffer.alloc(8), 16000), 'voice.wav', 24000)).toThrow('voice.wav: expected 24 kHz mono PCM16 WAV, found 16000 Hz');
  });

  it('refuses stereo and 8-bit files', () => {
    const stereo = encodeWavPcm16(Buffer.alloc(8), 16000);
    stereo.writeUInt16LE(2, 22);
    expect(() => parseWavPcm16(stereo, 's.wav')).toThrow(/2 channel/);
    const eight = encodeWavPcm16(Buffer.alloc(8), 16000);
    eight.writeUInt16LE(8, 34);
    expect(() => parseWavPcm16(eight, 'e.wav')).toThrow(/8-bit/);
  });

  it('refuses a file that is not WAV', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wav-'));
    const file = join(dir, 'notes.txt');
    await writeFile(file, 'hello, not audio');
    await expect(readWavPcm16(file)).rejects.toBeInstanceOf(AudioFormatError);
    await expect(readWavPcm16(file)).rejects.toThrow(`${file}: expected 16 kHz mono PCM16 WAV, found no RIFF/WAVE header`);
  });
});

/** A WAV around `data` in any format, as other tools write them; `extensible` wraps the tag in WAVE_FORMAT_EXTENSIBLE. */
function wavOf(data: Buffer, f: { tag: number; channels: number; rate: number; bits: number; extensible?: boolean; guid_tail?: string }): Buffer {
  const fmt = Buffer.alloc(f.extensible ? 40 : 16);
  fmt.writeUInt16LE(f.extensible ? 0xfffe : f.tag, 0);
  fmt.writeUInt16LE(f.channels, 2);
  fmt.writeUInt32LE(f.rate, 4);
  fmt.writeUInt32LE((f.rate * f.channels * f.bits) / 8, 8);
  fmt.writeUInt16LE((f.channels * f.bits) / 8, 12);
  fmt.writeUInt16LE(f.bits, 14);
  if (f.extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(f.bits, 18);
    fmt.writeUInt32LE(f.channels === 2 ? 3 : 4, 20);
    fmt.writeUInt16LE(f.tag, 24);
    Buffer.from(f.guid_tail ?? '000000001000800000aa00389b71', 'hex').copy(fmt, 26);
  }
  const head = Buffer.alloc(12);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(4 + 8 + fmt.length + 8 + data.length, 4);
  head.write('WAVE', 8, 'ascii');
  const chunk = (id: string, body: Buffer): Buffer => {
    const h = Buffer.alloc(8);
    h.write(id, 0, 'ascii');
    h.writeUInt32LE(body.length, 4);
    return Buffer.concat([h, body]);
  };
  return Buffer.concat([head, chunk('fmt ', fmt), chunk('data', data)]);
}

function samplesOf(pcm: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < pcm.length; i += 2) out.push(pcm.readInt16LE(i));
  return out;
}

/** A tone as PCM16 LE: `amplitude` of full scale, `seconds` long. */
function tone(freq_hz: number, amplitude: number, rate: number, seconds: number): Buffer {
  const n = Math.round(rate * seconds);
  const pcm = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) pcm.writeInt16LE(Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * freq_hz * i) / rate)), i * 2);
  return pcm;
}

/** Frequency from the first and last rising zero crossings (interpolated), and amplitude by least squares at that frequency. */
function measureTone(x: number[], rate: number): { freq_hz: number; amplitude: number } {
  const rising: number[] = [];
  for (let i = 1; i < x.length; i++) if (x[i - 1] < 0 && x[i] >= 0) rising.push(i - 1 + -x[i - 1] / (x[i] - x[i - 1]));
  const freq_hz = ((rising.length - 1) * rate) / (rising[rising.length - 1] - rising[0]);
  let c = 0;
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    c += x[i] * Math.cos((2 * Math.PI * freq_hz * i) / rate);
    s += x[i] * Math.sin((2 * Math.PI * freq_hz * i) / rate);
  }
  return { freq_hz, amplitude: (2 * Math.hypot(c, s)) / x.length / 32767 };
}

describe('any PCM WAV at the rate a session needs', () => {
  it.each([16000, 24000])('resamples 22,050 Hz to %d Hz keeping the duration to the sample and a tone’s frequency, amplitude and timing', (rate) => {
    const wav = encodeWavPcm16(tone(440, 0.5, 22050, 2), 22050);
    const { pcm, conversion } = parseWavAs(wav, 'tone.wav', rate);
    expect(conversion).toEqual({ file_rate: 22050, channels: 1, bits_per_sample: 16, format: 'pcm', resampled: true, mixed: false });
    expect(pcm.length / 2).toBe(2 * rate);
    // Away from the abrupt start and end, the tone measured from the output.
    const mid = samplesOf(pcm).slice(rate / 10, -rate / 10);
    const m = measureTone(mid, rate);
    expect(Math.abs(m.freq_hz - 440)).toBeLessThan(0.001); // measured: 4e-6 Hz (16 kHz), 8e-6 Hz (24 kHz)
    expect(Math.abs(m.amplitude - 0.5)).toBeLessThan(5e-5); // measured: 1e-8, 4.5e-6
    // Sample by sample against the ideal tone at the new rate: no delay, and within the
    // rounding of input and output (measured worst: 1.0 LSB at 16 kHz, 1.2 LSB at 24 kHz).
    let worst = 0;
    mid.forEach((v, k) => {
      const i = k + rate / 10;
      worst = Math.max(worst, Math.abs(v - 0.5 * 32767 * Math.sin((2 * Math.PI * 440 * i) / rate)));
    });
    expect(worst).toBeLessThan(2);
  });

  it('keeps the duration to the sample for rates that do not divide (44,100 → 16,000, 8,000 → 24,000, 11,025 → 16,000)', () => {
    for (const [from, to, n] of [
      [44100, 16000, 44101],
      [8000, 24000, 7999],
      [11025, 16000, 11025 * 3 + 7],
    ]) {
      const { pcm } = parseWavAs(encodeWavPcm16(Buffer.alloc(n * 2), from), 'x.wav', to);
      expect(pcm.length / 2).toBe(Math.round((n * to) / from));
    }
  });

  it('returns a 16-bit mono file at the rate asked for as it is', () => {
    const pcm = tone(440, 0.3, 16000, 0.1);
    const read = parseWavAs(encodeWavPcm16(pcm, 16000), 'a.wav', 16000);
    expect(read.pcm).toEqual(pcm);
    expect(read.conversion).toMatchObject({ resampled: false, mixed: false });
  });

  it('mixes stereo (and more channels) to mono by averaging', () => {
    const data = Buffer.alloc(3 * 4);
    [1000, 3000, -2000, -4000, 32767, 32767].forEach((v, i) => data.writeInt16LE(v, i * 2));
    const read = parseWavAs(wavOf(data, { tag: 1, channels: 2, rate: 16000, bits: 16 }), 's.wav', 16000);
    expect(samplesOf(read.pcm)).toEqual([2000, -3000, 32767]);
    expect(read.conversion).toMatchObject({ channels: 2, mixed: true, resampled: false });
    const six = Buffer.alloc(6 * 2);
    [600, 0, 0, 0, 0, 0].forEach((v, i) => six.writeInt16LE(v, i * 2));
    expect(samplesOf(parseWavAs(wavOf(six, { tag: 1, channels: 6, rate: 16000, bits: 16 }), '6.wav', 16000).pcm)).toEqual([100]);
  });

  it('reads 8-bit unsigned, 24- and 32-bit signed, and 32- and 64-bit float samples', () => {
    const u8 = Buffer.from([128, 255, 0, 192]);
    expect(samplesOf(parseWavAs(wavOf(u8, { tag: 1, channels: 1, rate: 16000, bits: 8 }), 'u8.wav', 16000).pcm)).toEqual([0, 32512, -32768, 16384]);
    const s24 = Buffer.alloc(4 * 3);
    [0x123456, -0x123456, 8388607, -8388608].forEach((v, i) => s24.writeIntLE(v, i * 3, 3));
    const r24 = parseWavAs(wavOf(s24, { tag: 1, channels: 1, rate: 16000, bits: 24 }), 's24.wav', 16000);
    expect(samplesOf(r24.pcm)).toEqual([Math.round(0x123456 / 256), Math.round(-0x123456 / 256), 32767, -32768]);
    expect(r24.conversion).toMatchObject({ bits_per_sample: 24, format: 'pcm' });
    const s32 = Buffer.alloc(2 * 4);
    [0x40000000, -0x20000000].forEach((v, i) => s32.writeInt32LE(v, i * 4));
    expect(samplesOf(parseWavAs(wavOf(s32, { tag: 1, channels: 1, rate: 16000, bits: 32 }), 's32.wav', 16000).pcm)).toEqual([16384, -8192]);
    const f32 = Buffer.alloc(4 * 4);
    [0.5, -0.25, 1.5, -1].forEach((v, i) => f32.writeFloatLE(v, i * 4));
    const r32 = parseWavAs(wavOf(f32, { tag: 3, channels: 1, rate: 16000, bits: 32 }), 'f32.wav', 16000);
    expect(samplesOf(r32.pcm)).toEqual([16384, -8192, 32767, -32768]);
    expect(r32.conversion).toMatchObject({ bits_per_sample: 32, format: 'float' });
    const f64 = Buffer.alloc(2 * 8);
    [0.5, -0.25].forEach((v, i) => f64.writeDoubleLE(v, i * 8));
    expect(samplesOf(parseWavAs(wavOf(f64, { tag: 3, channels: 1, rate: 16000, bits: 64 }), 'f64.wav', 16000).pcm)).toEqual([16384, -8192]);
  });

  it('reads WAVE_FORMAT_EXTENSIBLE with a PCM or float subformat', () => {
    const f32 = Buffer.alloc(2 * 2 * 4);
    [0.5, 0.25, -0.5, -0.25].forEach((v, i) => f32.writeFloatLE(v, i * 4));
    const read = parseWavAs(wavOf(f32, { tag: 3, channels: 2, rate: 16000, bits: 32, extensible: true }), 'x.wav', 16000);
    expect(samplesOf(read.pcm)).toEqual([12288, -12288]);
    expect(read.conversion).toMatchObject({ format: 'float', mixed: true });
    const s24 = Buffer.alloc(3);
    s24.writeIntLE(0x400000, 0, 3);
    expect(samplesOf(parseWavAs(wavOf(s24, { tag: 1, channels: 1, rate: 16000, bits: 24, extensible: true }), 'x.wav', 16000).pcm)).toEqual([16384]);
  });

  it('refuses other encodings and broken files, saying what it accepts and what it found', () => {
    const expected = `a.wav: expected ${ACCEPTED_WAV}, found`;
    const refusals: Array<[Buffer, string]> = [
      [wavOf(Buffer.alloc(8), { tag: 2, channels: 1, rate: 16000, bits: 4 }), '16000 Hz, 1 channel(s), 4-bit, format tag 2'],
      [wavOf(Buffer.alloc(8), { tag: 7, channels: 1, rate: 8000, bits: 8 }), '8000 Hz, 1 channel(s), 8-bit, format tag 7'],
      [wavOf(Buffer.alloc(8), { tag: 1, channels: 1, rate: 16000, bits: 12 }), '16000 Hz, 1 channel(s), 12-bit, format tag 1'],
      [wavOf(Buffer.alloc(8), { tag: 3, channels: 1, rate: 16000, bits: 16 }), '16000 Hz, 1 channel(s), 16-bit, format tag 3'],
      [wavOf(Buffer.alloc(8), { tag: 1, channels: 0, rate: 16000, bits: 16 }), '16000 Hz, 0 channel(s), 16-bit, format tag 1'],
      [wavOf(Buffer.alloc(8), { tag: 1, channels: 1, rate: 16000, bits: 16, extensible: true, guid_tail: '00000000000000000000000000ff' }), '16000 Hz, 1 channel(s), 16-bit, format tag 65534'],
      [Buffer.from('RIFF\x04\x00\x00\x00WAVE', 'latin1'), 'no fmt chunk'],
      [encodeWavPcm16(Buffer.alloc(0), 16000).subarray(0, 36), 'no data chunk'],
      [Buffer.from('ID3 not a wave file'), 'no RIFF/WAVE header'],
    ];
    for (const [bytes, found] of refusals) {
      const err = (() => {
        try {
          parseWavAs(bytes, 'a.wav', 16000);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(AudioFormatError);
      expect(err).toMatchObject({ name: 'AudioFormatError', code: 'AUDIO_FORMAT', file: 'a.wav' });
      expect((err as Error).message).toContain(`${expected} ${found}`);
    }
  });

  it('reads a committed espeak-ng utterance (22,050 Hz) at 16 kHz from its file', async () => {
    const file = join(__dirname, '..', 'speech', 'q1.wav');
    const native = parseWavPcm16(await readFile(file), file, 22050);
    const { pcm, conversion } = await readWavAs(file, 16000);
    expect(pcm.length / 2).toBe(Math.round((native.length / 2) * (16000 / 22050)));
    expect(conversion).toEqual({ file_rate: 22050, channels: 1, bits_per_sample: 16, format: 'pcm', resampled: true, mixed: false });
  });
});
