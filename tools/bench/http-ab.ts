/**
 * HTTP client CPU, build A against build B: `duplex-bench http` of each build (its dist/), closed
 * loop against a fresh max-throughput stub per run (this checkout's), the two builds' order
 * alternating run by run. Reports client CPU µs per request and requests/s of each, and the ratio
 * B / A per pair (median and range): what a change to the request path costs.
 *
 *   node --import tsx tools/bench/http-ab.ts --a /path/to/checkout-a --b . [--runs 5] [--duration 10]
 *        [--connections 64] [--output-length 160] [--stream-interval 10] [--extra "--goodput ttft:300"]
 *        [--out out/bench-http-ab] [--write-doc docs/performance.md]
 *
 * Each checkout must hold a built dist/ (`npm run build`). Every wait is bounded; only processes
 * started here are signalled, by PID; traffic stays on 127.0.0.1.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { HttpSummary } from '@duplex-bench/http-load';
import { runFile } from '@duplex-bench/results';
import { commandLine, docSection, writeDoc } from './doc';
import { hostInfo, hostLine } from './host';
import { exited, HTTP_LISTENING, installInterrupts, openLog, ROOT, runQuiet, spawnTracked, startMock, stopMock } from './processes';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    runs: { type: 'string', default: '5' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    'output-length': { type: 'string', default: '160' },
    'stream-interval': { type: 'string', default: '10' },
    extra: { type: 'string', default: '' },
    out: { type: 'string', default: 'out/bench-http-ab' },
    'write-doc': { type: 'string' },
  },
});
const runs = Number(values.runs);
const duration_s = Number(values.duration);
const connections = Number(values.connections);
const output_length = Number(values['output-length']);
const stream_interval = Number(values['stream-interval']);
const builds = { A: values.a ? resolve(values.a) : '', B: resolve(String(values.b)) };
if (!values.a || ![runs, connections, output_length, stream_interval].every((v) => Number.isInteger(v) && v >= 1) || !(duration_s > 0 && duration_s <= 600)) {
  process.stderr.write('usage: http-ab.ts --a CHECKOUT [--b CHECKOUT] [--runs 5] [--duration 10] [--connections 64] [--output-length 160] [--stream-interval 10] [--extra FLAGS] [--out DIR] [--write-doc FILE]\n');
  process.exit(2);
}
for (const [name, root] of Object.entries(builds)) {
  if (!existsSync(join(root, 'dist', 'duplex-bench.js'))) {
    process.stderr.write(`error: --${name.toLowerCase()} ${root}: no dist/duplex-bench.js (npm run build there first)\n`);
    process.exit(2);
  }
}

type Arm = 'A' | 'B';
interface Row {
  run: number;
  arm: Arm;
  us_per_request: number;
  requests_per_s: number;
  cores: number;
}

let stopping = false;
installInterrupts(() => (stopping = true));

const revision = (root: string) => runQuiet('git', ['-C', root, 'log', '-1', '--format=%h']) ?? '?';

async function one(run: number, arm: Arm): Promise<Row> {
  const dir = resolve(String(values.out), `run-${run}-${arm}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const stub = await startMock(dir, ['--protocol', 'http', '--stub', 'max-throughput', '--output-length', String(output_length), '--stream-interval', String(stream_interval)], ROOT, HTTP_LISTENING);
  const args = [join(builds[arm], 'dist', 'duplex-bench.js'), 'http', '--url', stub.url, '--concurrency', String(connections), '--max-connections', String(connections), '--duration', String(duration_s), '--max-tokens', String(output_length), '--input-tokens', '16', '--output', dir, '--quiet', '--allow-unqualified', '--model', 'stub', ...String(values.extra).split(/\s+/).filter(Boolean)];
  const child = spawnTracked('client', process.execPath, args, openLog(join(dir, 'client.stdout.log')), openLog(join(dir, 'client.stderr.log')), builds[arm]);
  await exited(child, (duration_s + 60) * 1000);
  await stopMock(stub);
  const s = JSON.parse(readFileSync(runFile(dir, 'summary'), 'utf8')) as HttpSummary;
  const row = { run, arm, us_per_request: s.client.cpu_us_per_request ?? NaN, requests_per_s: s.requests_per_s ?? NaN, cores: s.client.cpu_cores.total };
  process.stderr.write(`run ${run}, ${arm}: ${row.us_per_request} µs/request, ${row.requests_per_s} requests/s, ${row.cores} cores\n`);
  return row;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];
const range = (v: number[], digits = 1) => `${median(v).toFixed(digits)} [${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}]`;

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (let run = 1; run <= runs && !stopping; run++) {
    const order: Arm[] = run % 2 === 1 ? ['A', 'B'] : ['B', 'A'];
    for (const arm of order) if (!stopping) rows.push(await one(run, arm));
  }
  writeFileSync(join(String(values.out), 'results.json'), JSON.stringify(rows, null, 1));
  const ratios: number[] = [];
  for (let run = 1; run <= runs; run++) {
    const a = rows.find((r) => r.run === run && r.arm === 'A');
    const b = rows.find((r) => r.run === run && r.arm === 'B');
    if (a && b) ratios.push(b.us_per_request / a.us_per_request);
  }
  const lines = ['| build | commit | client CPU µs per request, median [min–max] | requests/s, median [min–max] | cores (median) | B / A µs per request, per run |', '| --- | --- | --- | --- | --- | --- |'];
  for (const arm of ['A', 'B'] as Arm[]) {
    const mine = rows.filter((r) => r.arm === arm);
    if (mine.length === 0) continue;
    lines.push(`| ${arm} | ${revision(builds[arm])} | ${range(mine.map((r) => r.us_per_request))} | ${range(mine.map((r) => r.requests_per_s), 0)} | ${median(mine.map((r) => r.cores)).toFixed(2)} | ${arm === 'B' && ratios.length ? `${range(ratios, 3)}×` : ''} |`);
  }
  const note = `closed loop, ${connections} connections, ${duration_s} s per run, ${runs} runs per build in alternating order, a fresh max-throughput stub (${output_length} characters, ${stream_interval} per SSE event, streamed) per run${values.extra ? `; both builds with \`${values.extra}\`` : ''}. CPU is the client process's own (user + system) over requests sent.`;
  const table = `${lines.join('\n')}\n\n${note}`;
  process.stdout.write(`${table}\n`);
  if (values['write-doc']) {
    writeDoc(String(values['write-doc']), 'http-ab', docSection('http-ab', '### HTTP client CPU per request, one build against another', hostLine(hostInfo(undefined)), `node --import tsx tools/bench/http-ab.ts ${commandLine(process.argv.slice(2))}`, new Date().toISOString().slice(0, 10), table));
  }
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
