/**
 * Where in a run the client's receive delay went over 5 ms: a run's timeline.json bins (frames read
 * with the server's send stamp, those read more than 5 ms after it, the longest delay) summed over
 * its phases, from run.json's start gate and duration: opening (before the gate), starting (the
 * first START_S seconds after it), steady, and ending (after the gate plus the duration: the ends of
 * input, the drains, the closes). Each phase's frames over 5 ms are also given as a share of all the
 * run's stamped frames: a p99 under 5 ms needs the phases' shares to sum under 1 %.
 *
 *   node --import tsx tools/bench/receive-delay-phases.ts RUN_DIR... [--start-s 2]
 *   (RUN_DIR: a run's output against a server that stamps its frames, e.g. the mock with --stamp-sends)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface Timeline {
  bin_s: number;
  origin_s: number;
  receive_delay_frames?: number[];
  receive_delay_over_5ms?: number[];
  receive_delay_max_ms?: number[];
}

const { positionals, values } = parseArgs({ allowPositionals: true, options: { 'start-s': { type: 'string', default: '2' } } });
const start_s = Number(values['start-s']);
if (positionals.length === 0 || !(start_s >= 0)) {
  process.stderr.write('usage: receive-delay-phases.ts RUN_DIR... [--start-s 2]\n');
  process.exit(2);
}

const PHASES = ['opening', 'starting', 'steady', 'ending'] as const;
for (const dir of positionals) {
  const timeline = JSON.parse(readFileSync(join(dir, 'timeline.json'), 'utf8')) as Timeline;
  const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { gate_s: number; layout: { duration_s: number } };
  const frames = timeline.receive_delay_frames;
  if (!frames) {
    console.log(`${dir}: no stamped frame (the server stamps none)`);
    continue;
  }
  const phaseOf = (bin_end_s: number): (typeof PHASES)[number] =>
    bin_end_s <= run.gate_s ? 'opening' : bin_end_s <= run.gate_s + start_s ? 'starting' : bin_end_s <= run.gate_s + run.layout.duration_s ? 'steady' : 'ending';
  const sums = new Map(PHASES.map((p) => [p, { frames: 0, over: 0, max: 0 }]));
  frames.forEach((n, i) => {
    const s = sums.get(phaseOf(timeline.origin_s + (i + 1) * timeline.bin_s)) as { frames: number; over: number; max: number };
    s.frames += n;
    s.over += timeline.receive_delay_over_5ms?.[i] ?? 0;
    s.max = Math.max(s.max, timeline.receive_delay_max_ms?.[i] ?? 0);
  });
  const total = frames.reduce((a, b) => a + b, 0);
  const over = [...sums.values()].reduce((a, s) => a + s.over, 0);
  console.log(`${dir}: ${total} stamped frames, ${over} over 5 ms (${((100 * over) / total).toFixed(2)} %)`);
  for (const p of PHASES) {
    const s = sums.get(p) as { frames: number; over: number; max: number };
    console.log(`  ${p.padEnd(9)} ${String(s.frames).padStart(9)} frames  ${String(s.over).padStart(7)} over 5 ms  ${((100 * s.over) / total).toFixed(2).padStart(5)} % of all  max ${s.max.toFixed(1)} ms`);
  }
}
