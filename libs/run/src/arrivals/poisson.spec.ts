import { seeded } from '@duplex-bench/pacer';
import { poissonOffsets } from './poisson';

describe('poissonOffsets', () => {
  it('draws instants that rise, start after the origin and end before --run-for', () => {
    const out = poissonOffsets(5, 100, seeded(3), 10_000);
    expect(out.length).toBeGreaterThan(0);
    expect(out[0]).toBeGreaterThan(0);
    expect(out.every((t, i) => i === 0 || t > out[i - 1])).toBe(true);
    expect(out.at(-1) as number).toBeLessThan(100);
  });

  it('sums exponential gaps of mean 1/rate from the origin: every instant is the sum of the draws before it', () => {
    // Random draws chosen so each gap is exactly known: 1 - u = e^-1 gives a gap of one mean.
    const u = 1 - Math.exp(-1);
    const out = poissonOffsets(2, 2.1, () => u, 100);
    expect(out).toHaveLength(4);
    out.forEach((t, k) => expect(t).toBeCloseTo((k + 1) * 0.5, 12));
  });

  it('over a long horizon, the count lies within its 99.9% Poisson interval, and the mean gap within its standard error band', () => {
    // Count over T at rate R is Poisson(R×T): 20,000 ± 3.29 × √20,000 ≈ ± 465 (seeded, so it cannot flake).
    const rate = 4;
    const out = poissonOffsets(rate, 5000, seeded(11), 1_000_000);
    expect(Math.abs(out.length - 20_000)).toBeLessThanOrEqual(3.29 * Math.sqrt(20_000));
    const gaps = out.map((t, i) => t - (i === 0 ? 0 : out[i - 1]));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    // An exponential's sd is its mean: the mean of n gaps is 0.25 ± 3.29 × 0.25/√n.
    expect(Math.abs(mean - 0.25)).toBeLessThanOrEqual(3.29 * (0.25 / Math.sqrt(gaps.length)));
    // Memoryless: about e^-1 of the gaps are longer than the mean (± 3.29 binomial sd).
    const p = Math.exp(-1);
    const longer = gaps.filter((g) => g > 0.25).length / gaps.length;
    expect(Math.abs(longer - p)).toBeLessThanOrEqual(3.29 * Math.sqrt((p * (1 - p)) / gaps.length));
  });

  it('replays from the same seed, and stops at max_count', () => {
    expect(poissonOffsets(3, 50, seeded(9), 1000)).toEqual(poissonOffsets(3, 50, seeded(9), 1000));
    expect(poissonOffsets(3, 50, seeded(9), 5)).toEqual(poissonOffsets(3, 50, seeded(9), 1000).slice(0, 5));
  });
});
