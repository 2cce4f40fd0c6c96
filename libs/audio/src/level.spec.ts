import { base64Dbfs, firstVoicedMs, isZeroBase64, VOICED_DBFS, pcm16Dbfs, pcm16Rms } from './level';
import { speech, whiteNoise } from './signals.spec-helpers';

function pcmOf(samples: number[]): Buffer {
  const b = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => b.writeInt16LE(s, i * 2));
  return b;
}

describe('level of a received chunk', () => {
  it('is the RMS of the samples, in dBFS', () => {
    expect(pcm16Rms(pcmOf([3, -4, 3, -4]))).toBeCloseTo(Math.sqrt(12.5), 12);
    expect(pcm16Rms(Buffer.alloc(0))).toBe(0);
    expect(pcm16Dbfs(pcmOf([-32768, -32768]))).toBe(0);
    expect(pcm16Dbfs(Buffer.alloc(1764 * 2))).toBe(Number.NEGATIVE_INFINITY);
    expect(pcm16Dbfs(whiteNoise(-60, 22050, 0.08))).toBeCloseTo(-60, 0);
  });

  it('calls every whole 80 ms chunk of an utterance voiced, and silence and -60 dBFS noise not', async () => {
    for (const name of ['q1', 'mhm', 'answer']) {
      const pcm = await speech(name, 22050);
      const chunk = 1764 * 2;
      const levels: number[] = [];
      for (let at = 0; at + chunk <= pcm.length; at += chunk) levels.push(pcm16Dbfs(pcm.subarray(at, at + chunk)));
      // espeak-ng's pauses are digital silence: chunks in them are -Infinity, the rest are speech.
      const sounding = levels.filter((l) => l > -80);
      expect(sounding.length).toBeGreaterThan(5);
      expect(Math.min(...sounding)).toBeGreaterThanOrEqual(VOICED_DBFS);
    }
    expect(pcm16Dbfs(whiteNoise(-60, 22050, 0.08, 5))).toBeLessThan(VOICED_DBFS);
  });
});

describe('base64Dbfs', () => {
  it("tells voiced chunks from silent ones as the whole chunk's level does, from four windows of the base64", async () => {
    // The mocks' answer and a user utterance, in 80 ms chunks at 22,050 Hz, with silence between.
    const pcm = Buffer.concat([await speech('answer', 22050), Buffer.alloc(22050), await speech('q1', 22050)]);
    const chunk = 1764 * 2;
    let agree = 0;
    let chunks = 0;
    for (let at = 0; at + chunk <= pcm.length; at += chunk, chunks++) {
      const part = pcm.subarray(at, at + chunk);
      const sampled = base64Dbfs(Buffer.from(part.toString('base64'), 'latin1'));
      if (sampled >= VOICED_DBFS === pcm16Dbfs(part) >= VOICED_DBFS) agree++;
    }
    // Measured: all but the chunks at the edges of words agree.
    expect(agree / chunks).toBeGreaterThan(0.9);
    expect(base64Dbfs(Buffer.from(Buffer.alloc(chunk).toString('base64'), 'latin1'))).toBe(-Infinity);
    // A short chunk is read whole.
    const short = pcm.subarray(pcm.length / 2, pcm.length / 2 + 200);
    expect(base64Dbfs(Buffer.from(short.toString('base64'), 'latin1'))).toBeCloseTo(pcm16Dbfs(short), 6);
  });

  it('reads the samples of its four windows exactly as decoding them would, padding included', () => {
    // The reference: each window's base64 decoded by Buffer, every whole sample squared.
    const reference = (b64: Buffer): number => {
      let sum = 0;
      let count = 0;
      for (let w = 0; w < 4; w++) {
        const start = Math.floor(((b64.length - 176) * w) / 3 / 8) * 8;
        const pcm = Buffer.from(b64.toString('latin1', start, start + 176), 'base64');
        for (let i = 0; i + 1 < pcm.length; i += 2) sum += pcm.readInt16LE(i) ** 2;
        count += pcm.length >> 1;
      }
      return 10 * Math.log10(sum / count / 32768 ** 2);
    };
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
    // Lengths of every remainder mod 3 and 6: no padding, '=', '==', and windows ending in it.
    for (let bytes = 3000; bytes < 3012; bytes++) {
      const b64 = Buffer.from(Buffer.from(Array.from({ length: bytes }, next)).toString('base64'), 'latin1');
      expect(base64Dbfs(b64)).toBeCloseTo(reference(b64), 9);
    }
  });
});

describe('isZeroBase64', () => {
  const b64 = (bytes: Buffer) => Buffer.from(bytes.toString('base64'), 'latin1');

  it('tells digital silence from any chunk with one byte that is not zero, for every padding', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 3528, 3529, 3530, 9000]) {
      expect(isZeroBase64(b64(Buffer.alloc(n)))).toBe(true);
      for (const at of n > 0 ? [0, Math.floor(n / 2), n - 1] : []) {
        const pcm = Buffer.alloc(n);
        pcm[at] = 1;
        expect(isZeroBase64(b64(pcm))).toBe(false);
      }
    }
    // A view into a larger message, as the loop hands it over.
    const message = Buffer.from(`{"delta":"${Buffer.alloc(12).toString('base64')}","x":"AAAB"}`, 'latin1');
    expect(isZeroBase64(message.subarray(10, 26))).toBe(true);
    expect(isZeroBase64(message.subarray(10, 40))).toBe(false);
  });
});

describe('firstVoicedMs', () => {
  /** `silence_ms` of silence, then `voice_ms` of a 440 Hz tone at `dbfs` RMS, at 24 kHz, as base64 bytes. */
  const chunk = (silence_ms: number, voice_ms: number, dbfs: number) => {
    const lead = 24 * silence_ms;
    const out = Buffer.alloc((lead + 24 * voice_ms) * 2);
    const amplitude = 32768 * 10 ** (dbfs / 20) * Math.SQRT2;
    for (let i = lead; i < out.length / 2; i++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
    return Buffer.from(out.toString('base64'), 'latin1');
  };

  it('finds where the voice starts in a chunk, to its 10 ms window', () => {
    expect(firstVoicedMs(chunk(0, 80, -20), 24000)).toBe(0);
    expect(firstVoicedMs(chunk(30, 50, -20), 24000)).toBe(30);
    // A voice starting mid-window is found in the first window it fills enough.
    expect(firstVoicedMs(chunk(35, 45, -20), 24000)).toBe(30);
  });

  it('finds none in digital silence or in audio below the voiced level', () => {
    expect(firstVoicedMs(chunk(80, 0, -20), 24000)).toBeNull();
    expect(firstVoicedMs(chunk(0, 80, VOICED_DBFS - 6), 24000)).toBeNull();
  });
});
