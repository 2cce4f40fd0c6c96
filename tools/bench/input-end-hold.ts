/**
 * Does a session's stream figure depend on when it started? Reads a run's duplex_metrics.json and
 * samples.msgpack, orders the sessions by the send start of their packet 0, and prints per group of
 * start order: the client's hold on the end of input (input_end_held_ms), the stream audio
 * generation time as reported (the hold left out), and as it was before the hold was left out
 * (reported + held). Medians per group.
 *
 *   node --import tsx tools/bench/input-end-hold.ts RUN_DIR [--groups 8]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { decodeSamples } from '@duplex-bench/metrics';
import { runFile } from '@duplex-bench/results';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { groups: { type: 'string', default: '8' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: input-end-hold.ts RUN_DIR [--groups 8]\n');
  process.exit(2);
}
const dir = positionals[0];
const groups = Number(values.groups);
const samples = decodeSamples(readFileSync(runFile(dir, 'samples')));
const metrics = JSON.parse(readFileSync(runFile(dir, 'duplex_metrics'), 'utf8')) as {
  duplex_session_metrics: Array<{ session_id: string; stream_audio_generation_ms: number | null; input_end_held_ms?: number }>;
};
const start = new Map(samples.sessions.filter((s) => s.start_s.length > 0).map((s) => [s.id, s.start_s[0]]));
const sessions = metrics.duplex_session_metrics
  .filter((m) => start.has(m.session_id) && m.stream_audio_generation_ms !== null)
  .sort((a, b) => (start.get(a.session_id) as number) - (start.get(b.session_id) as number));
const first_s = start.get(sessions[0].session_id) as number;

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.floor((s.length - 1) / 2)];
};
const f = (v: number | null) => (v === null ? '-' : v.toFixed(0));

process.stdout.write('| start order | sessions | packet 0 after the first, ms | held, ms (median) | generation reported, ms (median) | generation with the hold, ms (median) |\n| --- | --- | --- | --- | --- | --- |\n');
const size = Math.ceil(sessions.length / groups);
for (let g = 0; g < groups; g++) {
  const part = sessions.slice(g * size, (g + 1) * size);
  if (part.length === 0) continue;
  const held = part.map((m) => m.input_end_held_ms ?? 0);
  const reported = part.map((m) => m.stream_audio_generation_ms as number);
  const offset = ((start.get(part[0].session_id) as number) - first_s) * 1000;
  process.stdout.write(
    `| ${g + 1} of ${groups} | ${part.length} | ${f(offset)} | ${f(median(held))} | ${f(median(reported))} | ${f(median(reported.map((r, i) => r + held[i])))} |\n`,
  );
}
