import { constantOffsets } from './constant';

describe('constantOffsets', () => {
  it('puts the first arrival at the origin and each next one 1/rate later, up to (not at) the end', () => {
    expect(constantOffsets(4, 1, 100)).toEqual([0, 0.25, 0.5, 0.75]);
    expect(constantOffsets(4, 1.01, 100)).toEqual([0, 0.25, 0.5, 0.75, 1]);
  });

  it('computes instant k as k ÷ rate, so the millionth is where it should be (a running sum drifts)', () => {
    const out = constantOffsets(10, 100_000, 2_000_000);
    expect(out).toHaveLength(1_000_000);
    expect(out[999_999]).toBe(99_999.9);
  });

  it('stops at max_count', () => {
    expect(constantOffsets(1000, 10, 3)).toEqual([0, 0.001, 0.002]);
  });

  it('below one arrival per run still sends the first one at the origin', () => {
    expect(constantOffsets(0.1, 5, 10)).toEqual([0]);
  });
});
