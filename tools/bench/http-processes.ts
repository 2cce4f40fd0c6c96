/**
 * Client processes sweep for `duplex-bench http`: requests/s and SSE events/s against the
 * max-throughput stub with the same total of lanes split over 1, 2, 4 … processes (`--processes`),
 * counts interleaved run by run, a fresh stub per run. Writes a table and an SVG plot (median with
 * the min–max band per count), as the worker-count sweeps of other HTTP load generators do: pick the
 * count where requests/s peaks.
 *
 *   node --import tsx tools/bench/http-processes.ts [--processes 1,2,4] [--concurrency 64] [--duration 10]
 *        [--runs 3] [--output-length 160] [--stream-interval 10] [--out out/bench-http-processes]
 *        [--write-doc docs/performance.md] [--plot docs/http-processes.svg]
 *
 * Every wait is bounded; only processes started here are signalled, by PID; traffic stays on 127.0.0.1.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { HttpSummary } from '@duplex-bench/http-load';
import { commandLine, docSection, writeDoc } from './doc';
import { hostInfo, hostLine } from './host';
import { exited, HTTP_LISTENING, installInterrupts, openLog, ROOT, spawnTracked, startMock, stopMock } from './processes';
import { runFile } from '@duplex-bench/results';

const { values } = parseArgs({
  options: {
    processes: { type: 'string', default: '1,2,4' },
    concurrency: { type: 'string', default: '64' },
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    'output-length': { type: 'string', default: '160' },
    'stream-interval': { type: 'string', default: '10' },
    out: { type: 'string', default: 'out/bench-http-processes' },
    'write-doc': { type: 'string' },
    plot: { type: 'string' },
  },
});
const counts = String(values.processes).split(',').map(Number);
const concurrency = Number(values.concurrency);
const duration_s = Number(values.duration);
const runs = Number(values.runs);
if (!counts.every((p) => Number.isInteger(p) && p >= 1 && p <= concurrency) || !(runs >= 1) || !(duration_s > 0 && duration_s <= 600)) {
  process.stderr.write('usage: http-processes.ts [--processes 1,2,4] [--concurrency 64] [--duration 10] [--runs 3] [--out DIR] [--write-doc FILE] [--plot FILE.svg]\n');
  process.exit(2);
}

interface Row {
  run: number;
  processes: number;
  requests_per_s: number;
  sse_events_per_s: number;
  client_cores: number;
  qualified: boolean;
  failed: number;
}

let stopping = false;
installInterrupts(() => (stopping = true));

async function one(run: number, processes: number): Promise<Row> {
  const dir = join(String(values.out), `run-${run}`, `p${processes}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const stub = await startMock(dir, ['--protocol', 'http', '--stub', 'max-throughput', '--output-length', String(values['output-length']), '--stream-interval', String(values['stream-interval'])], ROOT, HTTP_LISTENING);
  const args = ['--import', 'tsx', join(ROOT, 'apps/probe/src/main.ts'), 'http', '--url', stub.url, '--concurrency', String(concurrency), '--processes', String(processes), '--duration', String(duration_s), '--max-tokens', String(values['output-length']), '--input-tokens', '16', '--model', 'stub', '--output', dir, '--quiet', '--allow-unqualified'];
  const child = spawnTracked('client', process.execPath, args, openLog(join(dir, 'client.stdout.log')), openLog(join(dir, 'client.stderr.log')));
  await exited(child, (duration_s + 90) * 1000);
  await stopMock(stub);
  const s = JSON.parse(readFileSync(runFile(dir, 'summary'), 'utf8')) as HttpSummary;
  const row = { run, processes, requests_per_s: s.requests_per_s ?? NaN, sse_events_per_s: s.client.sse_events / s.window_s, client_cores: s.client.cpu_cores.total, qualified: s.qualified, failed: s.requests.failed };
  process.stderr.write(`run ${run}, ${processes} processes: ${row.requests_per_s.toFixed(0)} requests/s, ${row.sse_events_per_s.toFixed(0)} SSE events/s, client ${row.client_cores.toFixed(2)} cores${row.qualified ? '' : ', unqualified'}\n`);
  return row;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];

/** A small line chart: requests/s median per process count, with its min–max band. */
function svgPlot(points: Array<{ x: number; median: number; min: number; max: number }>, title: string): string {
  const W = 640;
  const H = 360;
  const L = 70;
  const B = 50;
  const top = 40;
  const xs = points.map((p) => p.x);
  const yMax = Math.max(...points.map((p) => p.max)) * 1.1;
  const px = (x: number) => L + ((Math.log2(x) - Math.log2(Math.min(...xs))) / Math.max(1, Math.log2(Math.max(...xs)) - Math.log2(Math.min(...xs)))) * (W - L - 30);
  const py = (y: number) => H - B - (y / yMax) * (H - B - top);
  const band = [...points.map((p) => `${px(p.x)},${py(p.max)}`), ...[...points].reverse().map((p) => `${px(p.x)},${py(p.min)}`)].join(' ');
  const line = points.map((p) => `${px(p.x)},${py(p.median)}`).join(' ');
  const yTicks = Array.from({ length: 5 }, (_, i) => (yMax / 5) * (i + 1));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${title}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - 20}" y2="${H - B}" stroke="black"/><line x1="${L}" y1="${top}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    ...yTicks.map((y) => `<line x1="${L - 4}" y1="${py(y)}" x2="${W - 20}" y2="${py(y)}" stroke="#ddd"/><text x="${L - 8}" y="${py(y) + 4}" text-anchor="end">${Math.round(y)}</text>`),
    ...points.map((p) => `<text x="${px(p.x)}" y="${H - B + 18}" text-anchor="middle">${p.x}</text>`),
    `<text x="${W / 2}" y="${H - 10}" text-anchor="middle">client processes (--processes)</text>`,
    `<text x="18" y="${H / 2}" text-anchor="middle" transform="rotate(-90 18 ${H / 2})">completed requests/s</text>`,
    `<polygon points="${band}" fill="#4a90d9" fill-opacity="0.25"/>`,
    `<polyline points="${line}" fill="none" stroke="#1f5fa8" stroke-width="2"/>`,
    ...points.map((p) => `<circle cx="${px(p.x)}" cy="${py(p.median)}" r="3.5" fill="#1f5fa8"/>`),
    '</svg>',
  ].join('\n');
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (let run = 1; run <= runs && !stopping; run++) {
    const order = counts.map((_, i) => counts[(i + run - 1) % counts.length]);
    for (const p of order) if (!stopping) rows.push(await one(run, p));
  }
  writeFileSync(join(String(values.out), 'results.json'), JSON.stringify(rows, null, 1));
  const lines = ['| processes | requests/s, median [min–max] | SSE events/s, median [min–max] | client CPU cores, all processes (median) | qualified runs | failed requests |', '| --- | --- | --- | --- | --- | --- |'];
  const points: Array<{ x: number; median: number; min: number; max: number }> = [];
  for (const p of counts) {
    const mine = rows.filter((r) => r.processes === p);
    if (mine.length === 0) continue;
    const rps = mine.map((r) => r.requests_per_s);
    const ev = mine.map((r) => r.sse_events_per_s);
    points.push({ x: p, median: median(rps), min: Math.min(...rps), max: Math.max(...rps) });
    lines.push(`| ${p} | ${median(rps).toFixed(0)} [${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}] | ${median(ev).toFixed(0)} [${Math.min(...ev).toFixed(0)}–${Math.max(...ev).toFixed(0)}] | ${median(mine.map((r) => r.client_cores)).toFixed(2)} | ${mine.filter((r) => r.qualified).length} of ${mine.length} | ${mine.reduce((a, r) => a + r.failed, 0)} |`);
  }
  const note = `${concurrency} lanes in all (closed loop), split over the processes; ${duration_s} s per run; a fresh max-throughput stub per run (${values['output-length']} characters, ${values['stream-interval']} per SSE event) on the same host.`;
  const table = `${lines.join('\n')}\n\n${note}`;
  process.stdout.write(`${table}\n`);
  if (values.plot) writeFileSync(String(values.plot), svgPlot(points, `duplex-bench http: requests/s by client processes (${concurrency} lanes, max-throughput stub)`));
  if (values['write-doc']) {
    const host = hostLine(hostInfo(undefined));
    const plotLine = values.plot ? `\n\n![requests/s by client processes](${String(values.plot).replace(/^docs\//, '')})` : '';
    writeDoc(String(values['write-doc']), 'http-processes', docSection('http-processes', '### HTTP client processes sweep', host, `node --import tsx tools/bench/http-processes.ts ${commandLine(process.argv.slice(2))}`, new Date().toISOString().slice(0, 10), table + plotLine));
  }
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
