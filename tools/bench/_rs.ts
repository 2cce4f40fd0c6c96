import { Resampler, type ResampleQuality } from '../../libs/audio/src/resample';
const n = 22050 * 30;
const input = Float32Array.from({ length: n }, (_, i) => 0.3 * Math.sin(i * 0.05) + 0.1 * Math.sin(i * 1.3));
const qs: Record<string, ResampleQuality> = { zc3: { zero_crossings: 3, rolloff: 0.9, kaiser_beta: 6 }, zc2: { zero_crossings: 2, rolloff: 0.9, kaiser_beta: 5 } };
const best: Record<string, number> = {};
for (let round = 0; round < 15; round++) for (const [name, q] of Object.entries(qs)) {
  const r = new Resampler(22050, 8000, q);
  const t = process.hrtime.bigint();
  for (let at = 0; at < n; at += 1764) r.push(input.subarray(at, at + 1764));
  const us = Number(process.hrtime.bigint() - t) / 1000 / 30;
  best[name] = Math.min(best[name] ?? Infinity, us);
}
console.log(Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(0)} µs/s`).join('  '));
