import { createUsHistogram, recordMs } from '@duplex-bench/metrics';
import { cumulativeCounts, hdrHistogram } from './families';

describe('cumulativeCounts', () => {
  it('counts the values at or under each bound, as a sort of the raw values does (to HDR resolution)', () => {
    const h = createUsHistogram();
    const values_us: number[] = [];
    let x = 12345;
    for (let i = 0; i < 5000; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      const us = 1 + (x % 2_000_000); // 1 µs to 2 s
      values_us.push(us);
      h.recordValue(us);
    }
    const bounds = [1000, 5000, 20_000, 80_000, 500_000, 1_999_999];
    const { counts, sum } = cumulativeCounts(h, bounds);
    expect(sum / values_us.reduce((a, v) => a + v, 0)).toBeCloseTo(1, 3);
    bounds.forEach((b, i) => {
      // A value within HDR's 0.1% of a bound may fall either side of it.
      const surely = values_us.filter((v) => v <= b * 0.999).length;
      const maybe = values_us.filter((v) => v <= b * 1.001).length;
      expect(counts[i]).toBeGreaterThanOrEqual(surely);
      expect(counts[i]).toBeLessThanOrEqual(maybe);
    });
    expect(counts.at(-1)).toBeLessThanOrEqual(h.totalCount);
  });

  it('puts a value recorded exactly at a bound under it', () => {
    const h = createUsHistogram();
    recordMs(h, 80);
    recordMs(h, 80.5);
    expect(cumulativeCounts(h, [80_000, 81_000]).counts).toEqual([1, 2]);
  });
});

describe('hdrHistogram', () => {
  it('exposes cumulative buckets in seconds, +Inf equal to _count, and reads the recorder at each get()', async () => {
    const h = createUsHistogram();
    const family = hdrHistogram('x_seconds', 'help', [0.01, 0.1], () => h);
    recordMs(h, 5);
    recordMs(h, 50);
    recordMs(h, 500);
    let got = await family.get();
    const value = (metricName: string, le?: string | number) => got.values.find((v) => v.metricName === metricName && (le === undefined || v.labels.le === le))?.value;
    expect([value('x_seconds_bucket', 0.01), value('x_seconds_bucket', 0.1), value('x_seconds_bucket', '+Inf'), value('x_seconds_count')]).toEqual([1, 2, 3, 3]);
    expect(value('x_seconds_sum')).toBeCloseTo(0.555, 2);
    recordMs(h, 1);
    got = await family.get();
    expect(value('x_seconds_bucket', 0.01)).toBe(2);
  });
});

describe('cumulativeCounts, its sum', () => {
  it("equals HDR's own mean × count over a wide range of values", () => {
    const h = createUsHistogram();
    for (let i = 1; i < 20_000; i++) h.recordValue(Math.round((i * 7919) % 3_000_000) + 1);
    expect(cumulativeCounts(h, [1000]).sum).toBeCloseTo(h.mean * h.totalCount, 0);
  });
});
