/** A small seeded generator (mulberry32) of numbers in [0, 1): every draw can be replayed from the recorded seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An exponential draw of mean `mean` (the gap between Poisson arrivals). */
export function exponential(random: () => number, mean: number): number {
  return -Math.log(1 - random()) * mean;
}

/** A standard normal draw (Box–Muller). */
function normal(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/**
 * A lognormal draw with the given mean and coefficient of variation (spread ÷ mean); `cov` 0 is
 * the mean itself. Its median is mean ÷ √(1 + cov²).
 */
export function lognormal(random: () => number, mean: number, cov: number): number {
  if (cov <= 0) return mean;
  const sigma2 = Math.log(1 + cov * cov);
  return Math.exp(Math.log(mean) - sigma2 / 2 + Math.sqrt(sigma2) * normal(random));
}
