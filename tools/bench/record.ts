/**
 * Recording benchmark: `probe record` against the model mock at several concurrencies and burst
 * sizes (the shape of seed 000's recording table). Each run records 2 x concurrency sessions of
 * 20-60 s (4 subsets x concurrency/4 samples, both variants) with full traces and the
 * post-processing pool, on a fresh mock.
 *
 *   node --import tsx tools/bench/record.ts [--concurrency 24,32,64] [--bursts 1,25] [--runs 1]
 *        [--out out/bench-record] [--write-doc docs/performance.md]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { withSection } from './doc';
import { exited, ROOT, startMock, stopMock } from './processes';
import { runFile, SESSIONS_DIR } from '@duplex-bench/results';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '24,32,64' },
    bursts: { type: 'string', default: '1,25' },
    runs: { type: 'string', default: '1' },
    out: { type: 'string', default: 'out/bench-record' },
    'write-doc': { type: 'string' },
  },
});
const concurrencies = String(values.concurrency).split(',').map(Number);
const bursts = String(values.bursts).split(',').map(Number);
const runs = Number(values.runs);
if (concurrencies.some((c) => !(c >= 4 && c % 4 === 0)) || bursts.some((b) => !(b >= 1)) || !(runs >= 1)) {
  process.stderr.write('usage: record.ts [--concurrency 24,32,64 (multiples of 4)] [--bursts 1,25] [--runs 1] [--out DIR] [--write-doc FILE]\n');
  process.exit(2);
}

interface Row {
  concurrency: number;
  burst: number;
  run: number;
  code: number | null;
  qualified: boolean;
  sessions: number;
  with_violation: number;
  late: number;
  p99: number;
  max: number;
  cpu: number;
  ttfp_p50: number | null;
  postprocessed: number;
}

async function one(concurrency: number, burst: number, run: number): Promise<Row> {
  const dir = join(String(values.out), `c${concurrency}-b${burst}-r${run}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const mock = await startMock(dir, ['--profile', 'nemotron', '--burst-units', String(burst)]);
  const args = ['--import', 'tsx', join(ROOT, 'apps/probe/src/main.ts'), 'record', '--url', mock.url, '--concurrency', String(concurrency), '--per-subset', String(concurrency / 4), '--output', dir, '--quiet', '--allow-unqualified'];
  const code = await exited(spawn(process.execPath, args, { stdio: 'ignore' }), 20 * 60_000);
  await stopMock(mock);
  const summary = existsSync(runFile(dir, 'summary')) ? JSON.parse(readFileSync(runFile(dir, 'summary'), 'utf8')) : null;
  let postprocessed = 0;
  if (existsSync(join(dir, 'samples'))) {
    for (const name of readdirSync(join(dir, 'samples'))) if (JSON.parse(readFileSync(join(dir, 'samples', name), 'utf8')).postprocess) postprocessed++;
  }
  rmSync(join(dir, SESSIONS_DIR), { recursive: true, force: true }); // traces and WAVs: gigabytes at 64 sessions
  return {
    concurrency,
    burst,
    run,
    code,
    qualified: summary?.qualified ?? false,
    sessions: summary?.sessions.started ?? 0,
    with_violation: summary?.sessions.with_violation ?? NaN,
    late: summary?.packets.late ?? NaN,
    p99: summary?.pacing_deviation_ms.p99 ?? NaN,
    max: summary?.pacing_deviation_ms.max ?? NaN,
    cpu: summary?.cpu_cores.total ?? NaN,
    ttfp_p50: summary?.duplex?.ttfp_ms.p50 ?? null,
    postprocessed,
  };
}

async function main() {
  const rows: Row[] = [];
  for (let run = 1; run <= runs; run++) {
    for (const concurrency of concurrencies) {
      for (const burst of bursts) {
        const row = await one(concurrency, burst, run);
        rows.push(row);
        process.stderr.write(`${JSON.stringify(row)}\n`);
      }
    }
  }
  const host = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} logical cores, Linux ${release()}, Node ${process.version}`;
  const lines = [
    '| concurrency, burst | unqualified runs | sessions with a violation | late packets | p99 ms (largest) | max ms (median [min–max]) | recorder CPU, cores | TTFP p50 ms (server turns, client view) | sessions post-processed |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const c of concurrencies) {
    for (const b of bursts) {
      const r = rows.filter((x) => x.concurrency === c && x.burst === b);
      const maxes = r.map((x) => x.max).sort((a, z) => a - z);
      lines.push(
        `| ${c}, ${b} | ${r.filter((x) => !x.qualified).length} of ${r.length} | ${r.reduce((n, x) => n + x.with_violation, 0)} of ${r.reduce((n, x) => n + x.sessions, 0)} | ${r.reduce((n, x) => n + x.late, 0)} | ${Math.max(...r.map((x) => x.p99)).toFixed(1)} | ${maxes[Math.floor((maxes.length - 1) / 2)].toFixed(0)} [${maxes[0].toFixed(0)}–${maxes[maxes.length - 1].toFixed(0)}] | ${r.map((x) => x.cpu.toFixed(2)).join(', ')} | ${r.map((x) => x.ttfp_p50?.toFixed(0) ?? '-').join(', ')} | ${r.map((x) => x.postprocessed).join(', ')} |`,
      );
    }
  }
  const section = [
    '<!-- bench:record:start -->',
    '## Recording path: `probe record` against the model mock',
    '',
    `Host: ${host}`,
    '',
    `Command: \`node --import tsx tools/bench/record.ts --concurrency ${values.concurrency} --bursts ${values.bursts} --runs ${runs}\``,
    '',
    ...lines,
    '<!-- bench:record:end -->',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  writeFileSync(join(String(values.out), 'results.json'), JSON.stringify({ host, rows }, null, 1));
  const doc = values['write-doc'];
  if (doc) writeFileSync(doc, withSection(existsSync(doc) ? readFileSync(doc, 'utf8') : '# Performance\n', 'record', section));
}

void main();
