/**
 * What the client's loop ran while it was late: a run's CPU profile (`node --cpu-prof`, e.g.
 * `long-run.ts --node-flags="--cpu-prof --cpu-prof-dir=DIR"`) read against its timeline.json. For
 * each half-second bin whose loop lag passed `--over` ms, the longest stretch of profile samples
 * without an idle one in it (the callback that held the loop) is taken; the functions those samples
 * landed in are printed beside their share of the whole run, with the callbacks at their root.
 * Both clocks are the host's monotonic clock (V8's profile ticks and the timeline's origin).
 *
 *   node --import tsx tools/bench/stall-profile.ts PROFILE.cpuprofile RUN_DIR [--over 80] [--top 20]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }
interface Timeline { origin_s: number; bin_s: number; loop_lag_max_ms: Array<number | null> }

const { positionals, values } = parseArgs({ allowPositionals: true, options: { over: { type: 'string', default: '80' }, top: { type: 'string', default: '20' } } });
if (positionals.length !== 2) {
  process.stderr.write('usage: stall-profile.ts PROFILE.cpuprofile RUN_DIR [--over 80] [--top 20]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8')) as Profile;
const timeline = JSON.parse(readFileSync(join(positionals[1], 'timeline.json'), 'utf8')) as Timeline;
const over_ms = Number(values.over);
const top = Number(values.top);

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (id: number) => {
  const f = (nodes.get(id) as ProfileNode).callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.split('/').at(-1)}:${f.lineNumber + 1}`;
};
const fn = (id: number) => (nodes.get(id) as ProfileNode).callFrame.functionName;
const times: number[] = [];
let t = profile.startTime;
for (const d of profile.timeDeltas) times.push((t += d) / 1e6);

const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
const whole = new Map<string, number>();
for (const s of profile.samples) count(whole, label(s));
const held = new Map<string, number>();
const roots = new Map<string, number>();
let n = 0;
const bins = timeline.loop_lag_max_ms.flatMap((v, i) => (v !== null && v > over_ms ? [i] : []));
process.stdout.write(`${profile.samples.length} samples over ${(times.at(-1) as number) - times[0]} s; ${bins.length} bins with loop lag over ${over_ms} ms\n`);
for (const b of bins) {
  const lo = timeline.origin_s + b * timeline.bin_s - 0.1;
  const hi = timeline.origin_s + (b + 1) * timeline.bin_s;
  let best = 0, bestFrom = -1, run = 0, from = -1;
  for (let i = 0; i < times.length; i++) {
    if (times[i] < lo || times[i] > hi) continue;
    if (fn(profile.samples[i]) === '(idle)') {
      if (run > best) [best, bestFrom] = [run, from];
      run = 0;
      continue;
    }
    if (run++ === 0) from = i;
  }
  if (run > best) [best, bestFrom] = [run, from];
  if (bestFrom < 0) continue;
  process.stdout.write(`  bin at ${(b * timeline.bin_s).toFixed(1)} s: loop lag ${timeline.loop_lag_max_ms[b]} ms, busy ${((times[bestFrom + best - 1] - times[bestFrom]) * 1000).toFixed(1)} ms\n`);
  for (let i = bestFrom; i < bestFrom + best; i++) {
    const s = profile.samples[i];
    n++;
    count(held, label(s));
    const chain: number[] = [];
    for (let x = s; parent.has(x); x = parent.get(x) as number) chain.push(x);
    count(roots, chain.reverse().slice(0, 4).map(label).join(' > '));
  }
}
const pct = (v: number, of: number) => `${((100 * v) / Math.max(1, of)).toFixed(1).padStart(5)} %`;
process.stdout.write(`\nwhere the ${n} samples of those stretches landed (self), beside the whole run:\n`);
for (const [k, v] of [...held].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(v, n)}  (run ${pct(whole.get(k) ?? 0, profile.samples.length)})  ${k}\n`);
process.stdout.write('\nthe callbacks they ran under:\n');
for (const [k, v] of [...roots].sort((a, b) => b[1] - a[1]).slice(0, 8)) process.stdout.write(`  ${String(v).padStart(6)}  ${k}\n`);
