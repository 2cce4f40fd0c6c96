import { createUsHistogram, decodeHistogram, encodeHistogram, mergeHistograms, percentilesMs, recordMs, type Histogram, type PercentilesMs } from './histogram';

/**
 * A decoded histogram rebuilds its max from the bucket counts (the top of the max's bucket), while
 * a live one keeps the exact recorded max: their figures agree to the histogram's 3 significant
 * digits, not exactly.
 */
function expectSameFigures(actual: PercentilesMs, expected: PercentilesMs): void {
  expect(actual.count).toBe(expected.count);
  for (const k of ['p50', 'p90', 'p99', 'p99_9', 'max'] as const) {
    const e = expected[k] as number;
    expect(Math.abs((actual[k] as number) - e)).toBeLessThanOrEqual(e * 0.001 + 0.001);
  }
}

const withValues = (values_ms: number[]) => {
  const h = createUsHistogram();
  for (const v of values_ms) recordMs(h, v);
  return h;
};

describe('histograms', () => {
  it('reports null percentiles for an empty histogram', () => {
    expect(percentilesMs(createUsHistogram())).toEqual({ count: 0, p50: null, p90: null, p99: null, p99_9: null, max: null });
  });

  it('gives percentiles in ms to 3 significant digits, at µs resolution', () => {
    const p = percentilesMs(withValues(Array.from({ length: 1000 }, (_, i) => (i + 1) / 10)));
    expect(p.count).toBe(1000);
    expect(p.p50).toBeCloseTo(50, 1);
    expect(p.p90).toBeCloseTo(90, 1);
    expect(p.p99).toBeCloseTo(99, 1);
    expect(p.p99_9).toBeCloseTo(99.9, 1);
    expect(p.max).toBeCloseTo(100, 1);
    expect(percentilesMs(withValues([0.004])).max).toBe(0.004);
  });

  it('puts each value in the bucket hdr-histogram-js puts it in, past its range included', () => {
    const us = [0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 80_000, 2 ** 31 - 1, 2 ** 31, 3_600_000_000, 5_000_000_000];
    for (let k = 1; k < 34; k++) us.push(2 ** k - 1, 2 ** k, 2 ** k + 1);
    let seed = 7;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      us.push(Math.floor((seed / 2 ** 31) ** 4 * 2 ** 32));
    }
    const ours = createUsHistogram();
    const theirs = createUsHistogram();
    for (const v of us) {
      recordMs(ours, v / 1000);
      theirs.recordValue(v);
    }
    const counts = (h: Histogram) => {
      const js = h as unknown as { countsArrayLength: number; getCountAtIndex(i: number): number };
      return Array.from({ length: js.countsArrayLength }, (_, i) => js.getCountAtIndex(i));
    };
    expect(counts(ours)).toEqual(counts(theirs));
    expect([ours.totalCount, ours.minNonZeroValue, ours.maxValue]).toEqual([theirs.totalCount, theirs.minNonZeroValue, theirs.maxValue]);
    expect(encodeHistogram(ours)).toBe(encodeHistogram(theirs));
    // Within the range every value takes the integer path (recordValue is never called); past it, recordValue.
    const small = createUsHistogram();
    const slow = jest.spyOn(small, 'recordValue');
    for (const v of [0.003, 70, 2.5, 0, 2 ** 31 / 1000 - 0.001]) recordMs(small, v);
    expect(slow).not.toHaveBeenCalled();
    expect([small.totalCount, small.minNonZeroValue]).toEqual([5, 3]);
    recordMs(small, 2 ** 31 / 1000);
    expect(slow).toHaveBeenCalledTimes(1);
  });

  it('refuses a negative or non-numeric duration', () => {
    expect(() => recordMs(createUsHistogram(), -0.001)).toThrow(RangeError);
    expect(() => recordMs(createUsHistogram(), Number.NaN)).toThrow(RangeError);
  });

  it('comes back the same from its compressed base64 form', () => {
    const h = withValues([0.01, 0.5, 3, 3, 80.1, 900]);
    const encoded = encodeHistogram(h);
    expect(typeof encoded).toBe('string');
    expect(encoded).toMatch(/^[A-Za-z0-9+/=]+$/);
    const back = decodeHistogram(encoded);
    expect(back.totalCount).toBe(6);
    expectSameFigures(percentilesMs(back), percentilesMs(h));
    // Encoding is stable: a decoded histogram encodes to the same figures again.
    expect(percentilesMs(decodeHistogram(encodeHistogram(back)))).toEqual(percentilesMs(back));
  });

  it('merges decoded parts into what one histogram of every value would hold', () => {
    const a = [0.2, 1, 2, 40];
    const b = [0.3, 5, 120];
    const c: number[] = [];
    const merged = mergeHistograms([a, b, c].map((values) => decodeHistogram(encodeHistogram(withValues(values)))));
    expect(merged.totalCount).toBe(7);
    expectSameFigures(percentilesMs(merged), percentilesMs(withValues([...a, ...b, ...c])));
    // Merging live histograms keeps the exact max.
    expect(percentilesMs(mergeHistograms([withValues(a), withValues(b)]))).toEqual(percentilesMs(withValues([...a, ...b])));
    expect(percentilesMs(mergeHistograms([])).count).toBe(0);
  });
});
