/**
 * Where in a run the pacing deviation came from: reads a run's samples.msgpack and prints, per time
 * bin since the first packet, the largest |deviation| and how many packets were over a threshold.
 * It showed that the late packets of 512-session runs came in the last 0.5 s (end flows competing
 * with the last packets) and the first 0.5 s (start-up), not mid-run.
 *
 *   node --import tsx tools/bench/deviation-by-time.ts out/run1/samples.msgpack [--bin-s 0.5] [--over-ms 10]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { decodeSamples } from '@duplex-bench/metrics';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { 'bin-s': { type: 'string', default: '0.5' }, 'over-ms': { type: 'string', default: '10' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: deviation-by-time.ts RUN/samples.msgpack [--bin-s 0.5] [--over-ms 10]\n');
  process.exit(2);
}
const bin_s = Number(values['bin-s']);
const over_ms = Number(values['over-ms']);
const file = decodeSamples(readFileSync(positionals[0]));

let first_s = Infinity;
for (const s of file.sessions) if (s.start_s.length > 0) first_s = Math.min(first_s, s.start_s[0]);
const bins = new Map<number, { max_ms: number; over: number; packets: number }>();
for (const s of file.sessions) {
  for (let i = 0; i < s.start_s.length; i++) {
    const key = Math.floor((s.start_s[i] - first_s) / bin_s);
    const bin = bins.get(key) ?? { max_ms: 0, over: 0, packets: 0 };
    const dev_ms = Math.abs(s.deviation_ms[i]);
    bin.max_ms = Math.max(bin.max_ms, dev_ms);
    bin.packets++;
    if (dev_ms > over_ms) bin.over++;
    bins.set(key, bin);
  }
}
process.stdout.write(`| from s | packets | max |deviation| ms | over ${over_ms} ms |\n| --- | --- | --- | --- |\n`);
for (const [key, bin] of [...bins.entries()].sort((a, b) => a[0] - b[0])) {
  process.stdout.write(`| ${(key * bin_s).toFixed(1)} | ${bin.packets} | ${bin.max_ms.toFixed(1)} | ${bin.over} |\n`);
}
