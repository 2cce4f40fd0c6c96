import { exponential, lognormal, seeded } from './random';

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const draws = (n: number, f: () => number) => Array.from({ length: n }, f);

describe('seeded draws', () => {
  it('replays from the seed', () => {
    expect(draws(3, seeded(42))).toEqual(draws(3, seeded(42)));
    expect(draws(3, seeded(42))).not.toEqual(draws(3, seeded(43)));
  });

  it('exponential gaps have the mean asked for (Poisson arrivals at 1/mean per second)', () => {
    const r = seeded(1);
    const v = draws(20_000, () => exponential(r, 0.02));
    expect(mean(v)).toBeGreaterThan(0.0194);
    expect(mean(v)).toBeLessThan(0.0206);
    expect(Math.min(...v)).toBeGreaterThanOrEqual(0);
  });

  it('lognormal draws have the mean and coefficient of variation asked for, and the median mean/sqrt(1+cov^2)', () => {
    const r = seeded(2);
    const v = draws(40_000, () => lognormal(r, 200, 0.2));
    const m = mean(v);
    const sd = Math.sqrt(mean(v.map((x) => (x - m) ** 2)));
    expect(m).toBeGreaterThan(198);
    expect(m).toBeLessThan(202);
    expect(sd / m).toBeGreaterThan(0.19);
    expect(sd / m).toBeLessThan(0.21);
    const sorted = [...v].sort((a, b) => a - b);
    expect(sorted[20_000]).toBeCloseTo(200 / Math.sqrt(1.04), -0.5);
    expect(lognormal(r, 200, 0)).toBe(200);
  });
});
