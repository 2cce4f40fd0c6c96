export { seeded } from '@duplex-bench/pacer';

export const median = (v: number[]): number | null => {
  if (v.length === 0) return null;
  const s = [...v].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * B/A of medians with a 95% percentile-bootstrap interval: both arms resampled with replacement,
 * `draws` times. A verdict only where the interval excludes 1.
 */
export function bootstrapRatio(a: number[], b: number[], random: () => number, draws = 4000): { ratio: number | null; interval: [number, number] | null } {
  const ma = median(a);
  const mb = median(b);
  if (ma === null || mb === null || ma === 0) return { ratio: null, interval: null };
  const pick = (v: number[]) => Array.from({ length: v.length }, () => v[Math.floor(random() * v.length)]);
  const ratios: number[] = [];
  for (let i = 0; i < draws; i++) {
    const da = median(pick(a)) as number;
    if (da !== 0) ratios.push((median(pick(b)) as number) / da);
  }
  ratios.sort((x, y) => x - y);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.max(0, Math.floor(q * ratios.length)))];
  const round = (x: number) => Math.round(x * 10000) / 10000;
  return { ratio: round(mb / ma), interval: [round(at(0.025)), round(at(0.975))] };
}

/**
 * Exact two-sided p of the Mann-Whitney rank test (ties count a half): how often arms drawn from one
 * distribution would order their values at least this unevenly. With 3 runs an arm it cannot go
 * below 0.1, so no verdict is given on so few, however the bootstrap interval falls.
 */
export function mannWhitneyP(a: number[], b: number[]): number {
  const n = a.length;
  const m = b.length;
  let u = 0;
  for (const x of a) for (const y of b) u += y > x ? 1 : y === x ? 0.5 : 0;
  // ways[i][j][k]: orderings of i values of A and j of B with k (A, B) pairs where B is above.
  let ways: number[][][] = Array.from({ length: n + 1 }, () => Array.from({ length: m + 1 }, () => [] as number[]));
  for (let i = 0; i <= n; i++) {
    for (let j = 0; j <= m; j++) {
      const w = new Array(i * j + 1).fill(0);
      if (i === 0 || j === 0) w[0] = 1;
      else {
        // The largest value is B's (above all i values of A) or A's (above none of B).
        ways[i][j - 1].forEach((c, k) => (w[k + i] += c));
        ways[i - 1][j].forEach((c, k) => (w[k] += c));
      }
      ways[i][j] = w;
    }
  }
  const dist = ways[n][m];
  ways = [];
  const total = dist.reduce((s, c) => s + c, 0);
  const below = dist.reduce((s, c, k) => s + (k <= u ? c : 0), 0) / total;
  const above = dist.reduce((s, c, k) => s + (k >= u ? c : 0), 0) / total;
  return Math.min(1, 2 * Math.min(below, above));
}
