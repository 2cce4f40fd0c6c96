/**
 * Layouts benchmark: the same total of sessions in 1, 2 or 4 probe processes (`--processes`), each
 * run against a fresh append-echo mock on the same host, layouts interleaved run by run.
 *
 *   node --import tsx tools/bench/layouts.ts [--layouts 1x512,2x256,4x128] [--runs 3] [--duration 30]
 *        [--out out/bench-layouts] [--write-doc docs/performance.md]
 *
 * Every wait is bounded; only processes started here are signalled, by PID; traffic stays on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { withSection } from './doc';
import { exited, ROOT, startMock, stopMock } from './processes';
import { runFile, SESSIONS_DIR } from '@duplex-bench/results';

const { values } = parseArgs({
  options: {
    layouts: { type: 'string', default: '1x512,2x256,4x128' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '30' },
    out: { type: 'string', default: 'out/bench-layouts' },
    'write-doc': { type: 'string' },
  },
});
const layouts = String(values.layouts).split(',').map((l) => l.split('x').map(Number) as [number, number]);
const runs = Number(values.runs);
const duration_s = Number(values.duration);
if (layouts.some(([p, s]) => !(p >= 1 && s >= 1)) || !(runs >= 1) || !(duration_s > 0)) {
  process.stderr.write('usage: layouts.ts [--layouts 1x512,2x256] [--runs 3] [--duration 30] [--out DIR] [--write-doc FILE]\n');
  process.exit(2);
}

interface Row { run: number; layout: string; code: number | null; qualified: boolean; late: number; p99: number; max: number; cpu: number[] }

async function one(run: number, [p, s]: [number, number]): Promise<Row> {
  const dir = join(String(values.out), `run-${run}`, `${p}x${s}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const mock = await startMock(dir);
  const probe = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'apps/probe/src/main.ts'), 'run', '--url', mock.url, '--processes', String(p), '--concurrency', String(s), '--duration', String(duration_s), '--output', dir, '--quiet', '--allow-unqualified'],
    { stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const code = await exited(probe, (duration_s + 120) * 1000);
  await stopMock(mock);
  const summary = existsSync(runFile(dir, 'summary')) ? JSON.parse(readFileSync(runFile(dir, 'summary'), 'utf8')) : null;
  for (let i = 0; i < p; i++) rmSync(join(dir, p > 1 ? `p${i}` : '', SESSIONS_DIR), { recursive: true, force: true });
  const cpu = p > 1 ? summary?.cpu_cores.per_process ?? [] : [summary?.cpu_cores.total ?? NaN];
  return { run, layout: `${p}x${s}`, code, qualified: summary?.qualified ?? false, late: summary?.packets.late ?? NaN, p99: summary?.pacing_deviation_ms.p99 ?? NaN, max: summary?.pacing_deviation_ms.max ?? NaN, cpu };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];

async function main() {
  const rows: Row[] = [];
  for (let run = 1; run <= runs; run++) {
    const order = layouts.map((_, i) => layouts[(i + run - 1) % layouts.length]);
    for (const layout of order) {
      const row = await one(run, layout);
      rows.push(row);
      process.stderr.write(`run ${run} ${row.layout}: exit ${row.code}, qualified ${row.qualified}, late ${row.late}, p99 ${row.p99} ms, max ${row.max} ms, cpu ${row.cpu.join('/')}\n`);
    }
  }
  const lines = [
    '| layout (processes x sessions) | qualified runs | late packets | p99 ms, median [min–max] | max ms, median [min–max] | client CPU per process, cores (median) | client CPU total, cores (median) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [p, s] of layouts) {
    const r = rows.filter((x) => x.layout === `${p}x${s}`);
    const span = (k: 'p99' | 'max') => `${median(r.map((x) => x[k])).toFixed(1)} [${Math.min(...r.map((x) => x[k])).toFixed(1)}–${Math.max(...r.map((x) => x[k])).toFixed(1)}]`;
    const perProcess = Array.from({ length: p }, (_, i) => median(r.map((x) => x.cpu[i] ?? NaN)).toFixed(2)).join(' / ');
    const total = median(r.map((x) => x.cpu.reduce((a, b) => a + b, 0))).toFixed(2);
    lines.push(`| ${p} x ${s} | ${r.filter((x) => x.qualified).length} of ${r.length} | ${r.reduce((a, x) => a + x.late, 0)} | ${span('p99')} | ${span('max')} | ${perProcess} | ${total} |`);
  }
  const host = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} logical cores, Linux ${release()}, Node ${process.version}`;
  const section = [
    '<!-- bench:layouts:start -->',
    '## One process or several: layouts of the same sessions',
    '',
    `Host: ${host}`,
    '',
    `Command: \`node --import tsx tools/bench/layouts.ts --layouts ${values.layouts} --runs ${runs} --duration ${duration_s}\``,
    '',
    ...lines,
    '<!-- bench:layouts:end -->',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  writeFileSync(join(String(values.out), 'results.json'), JSON.stringify({ host, rows }, null, 1));
  const doc = values['write-doc'];
  if (doc) {
    writeFileSync(doc, withSection(existsSync(doc) ? readFileSync(doc, 'utf8') : '# Performance\n', 'layouts', section));
  }
}

void main();
