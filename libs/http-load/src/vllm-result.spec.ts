import { npPercentile, peakConcurrency } from './vllm-result';

describe("npPercentile (numpy.percentile's default, linear)", () => {
  it('matches numpy on small sets', () => {
    // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = [2.5, 3.7, 3.97]
    const s = [1, 2, 3, 4];
    expect(npPercentile(s, 50)).toBeCloseTo(2.5, 12);
    expect(npPercentile(s, 90)).toBeCloseTo(3.7, 12);
    expect(npPercentile(s, 99)).toBeCloseTo(3.97, 12);
    expect(npPercentile([7], 99)).toBe(7);
    expect(npPercentile([], 50)).toBe(0);
  });
});

describe("peakConcurrency (vLLM's sweep line over half-open spans)", () => {
  it('counts overlaps; an end and a start at one time do not overlap', () => {
    expect(peakConcurrency([])).toBe(0);
    expect(peakConcurrency([[0, 1], [1, 2], [2, 3]])).toBe(1);
    expect(peakConcurrency([[0, 3], [1, 2], [1.5, 4], [3, 5]])).toBe(3);
  });
});
