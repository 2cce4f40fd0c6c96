import { bootstrapRatio, mannWhitneyP, seeded } from './statistics';

describe('mannWhitneyP', () => {
  it('is exact: complete separation of 4 and 4 runs gives 2/70; of 3 and 3, 2/20; interleaved arms, 1', () => {
    expect(mannWhitneyP([1, 2, 3, 4], [5, 6, 7, 8])).toBeCloseTo(2 / 70, 10);
    expect(mannWhitneyP([5, 6, 7, 8], [1, 2, 3, 4])).toBeCloseTo(2 / 70, 10);
    expect(mannWhitneyP([1, 2, 3], [4, 5, 6])).toBeCloseTo(0.1, 10);
    expect(mannWhitneyP([1, 4, 5, 8], [2, 3, 6, 7])).toBe(1);
  });
});

describe('bootstrapRatio', () => {
  it('gives B/A of medians, and an interval that excludes 1 only when the arms differ', () => {
    const random = seeded(7);
    const differ = bootstrapRatio([100, 101, 99, 100, 102], [200, 198, 203, 201, 199], random);
    expect(differ.ratio).toBeCloseTo(2, 2);
    expect(differ.interval?.[0]).toBeGreaterThan(1);
    const same = bootstrapRatio([100, 104, 97, 101, 99], [98, 103, 100, 102, 97], random);
    expect(same.interval?.[0]).toBeLessThan(1);
    expect(same.interval?.[1]).toBeGreaterThan(1);
  });
});
