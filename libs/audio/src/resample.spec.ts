import { FILE_QUALITY, LinearResampler, Resampler, VAD_QUALITY, linearKeepsVadBand, resampleAll } from './resample';

function sine(freq_hz: number, rate: number, n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => 0.5 * Math.sin((2 * Math.PI * freq_hz * i) / rate));
}

function rmsDb(x: Float32Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += x[i] * x[i];
  return 10 * Math.log10(sum / (to - from) / 0.125); // against a 0.5-amplitude sine
}

/** Stopband of the VAD's filter (2 zero crossings), 22,050 to 8,000 Hz: measured -62 dB at 10 kHz, -34 dB at 6 kHz. */
const VAD_DB = -60;
const VAD_6K_DB = -30;

describe('Resampler', () => {
  it('cuts off below the new Nyquist when downsampling: a 10 kHz tone does not alias into 22,050 → 16,000', () => {
    const out = resampleAll(sine(10000, 22050, 22050), 22050, 16000, FILE_QUALITY);
    // Measured -100 dB (FILE_QUALITY); an aliasing converter would give a 6 kHz tone at 0 dB.
    expect(rmsDb(out, 1600, 14400)).toBeLessThan(-80);
    // The VAD's short filter, to the 8 kHz it runs at: a 10 kHz tone would alias to 2 kHz, inside the
    // band the VAD looks at; it stays out (measured VAD_DB below).
    expect(rmsDb(resampleAll(sine(10000, 22050, 22050), 22050, 8000, VAD_QUALITY), 800, 7200)).toBeLessThan(VAD_DB);
    // 6 kHz, the transition band's far side, would alias to 2 kHz.
    expect(rmsDb(resampleAll(sine(6000, 22050, 22050), 22050, 8000, VAD_QUALITY), 800, 7200)).toBeLessThan(VAD_6K_DB);
  });

  it('passes a tone inside the band at unit gain (3 kHz, 24,000 → 16,000)', () => {
    const out = resampleAll(sine(3000, 24000, 24000), 24000, 16000, FILE_QUALITY);
    expect(Math.abs(rmsDb(out, 1600, 14400))).toBeLessThan(0.01);
  });

  it('gives the same samples fed in chunks of any size as in one piece', () => {
    const input = sine(440, 22050, 5000);
    const whole = resampleAll(input, 22050, 16000, VAD_QUALITY);
    const r = new Resampler(22050, 16000, VAD_QUALITY);
    const parts: Float32Array[] = [];
    for (let at = 0, size = 1; at < input.length; at += size, size = (size * 7) % 997 || 1) parts.push(r.push(input.subarray(at, at + size)));
    parts.push(r.end());
    const chunked = Float32Array.from(parts.flatMap((p) => Array.from(p)));
    expect(chunked.length).toBe(whole.length);
    expect(Math.max(...chunked.map((v, i) => Math.abs(v - whole[i])))).toBe(0);
  });

  it('refuses rates that are not positive whole numbers', () => {
    expect(() => new Resampler(22050.5, 16000)).toThrow(RangeError);
    expect(() => new Resampler(16000, 0)).toThrow('cannot resample 16000 Hz to 0 Hz');
  });
});

describe('LinearResampler', () => {
  const ramp = Int16Array.from({ length: 2205 }, (_, i) => ((i * 37) % 4001) - 2000);

  it('gives output n at input time n × from / to, between its two neighbours', () => {
    const out = new LinearResampler(24000, 16000).push(Int16Array.from([0, 300, 600, 900, 1200, -600, 0]));
    // Outputs at inputs 0, 1.5, 3 and 4.5; the next, at 6, needs input 7: 4 outputs of 7 inputs.
    expect(Array.from(out)).toEqual([0, 450, 900, 300]);
    // Upsampling: 8,000 to 16,000 puts a sample halfway between each pair.
    expect(Array.from(new LinearResampler(8000, 16000).push(Int16Array.from([0, 100, -100])))).toEqual([0, 50, 100, 0]);
  });

  it('gives the same samples fed in chunks of any size as in one piece, at 22,050 and 24,000 Hz', () => {
    for (const rate of [22050, 24000]) {
      const whole = Array.from(new LinearResampler(rate, 16000).push(ramp));
      const r = new LinearResampler(rate, 16000);
      const chunked: number[] = [];
      for (let at = 0, size = 1; at < ramp.length; at += size, size = (size * 7) % 331 || 1) chunked.push(...r.push(ramp.subarray(at, at + size)));
      expect(chunked).toEqual(whole);
      // Every output but the last, which would need input past the end.
      expect(whole.length).toBe(Math.ceil(((ramp.length - 1) * 16000) / rate));
    }
  });

  it('is used for the VAD only where its aliases land above the 4 kHz libfvad reads', () => {
    expect([16000, 22050, 24000, 32000, 44100].map((rate) => linearKeepsVadBand(rate, 16000))).toEqual([true, true, true, false, false]);
    expect(linearKeepsVadBand(16000, 8000)).toBe(false);
  });
});
