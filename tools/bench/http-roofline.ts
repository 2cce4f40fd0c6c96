/**
 * HTTP roofline: requests/s and SSE events/s that `duplex-bench http` (closed loop, every SSE event
 * parsed) and autocannon (bytes only, no SSE parsing) get from the max-throughput stub, streamed and
 * not, in the same run: each pair against one fresh stub, the two clients' order alternating run by
 * run. The stub answers from pre-built bodies, so the figures are the clients' own ceilings.
 *
 *   node --import tsx tools/bench/http-roofline.ts [--connections 64] [--duration 10] [--runs 3]
 *        [--output-length 160] [--stream-interval 10] [--out out/bench-http] [--write-doc docs/performance.md]
 *
 * Every wait is bounded; only processes started here are signalled, by PID; traffic stays on 127.0.0.1.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { requestBody } from '@duplex-bench/http-load';
import type { HttpSummary } from '@duplex-bench/http-load';
import { commandLine, docSection, writeDoc } from './doc';
import { hostInfo, hostLine } from './host';
import { exited, HTTP_LISTENING, installInterrupts, openLog, procCpuSeconds, ROOT, spawnTracked, startMock, stopMock } from './processes';
import { runFile } from '@duplex-bench/results';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '64' },
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    'output-length': { type: 'string', default: '160' },
    'stream-interval': { type: 'string', default: '10' },
    out: { type: 'string', default: 'out/bench-http' },
    'write-doc': { type: 'string' },
  },
});
const connections = Number(values.connections);
const duration_s = Number(values.duration);
const runs = Number(values.runs);
const output_length = Number(values['output-length']);
const stream_interval = Number(values['stream-interval']);
if (![connections, runs, output_length, stream_interval].every((v) => Number.isInteger(v) && v >= 1) || !(duration_s > 0 && duration_s <= 600)) {
  process.stderr.write('usage: http-roofline.ts [--connections 64] [--duration 10] [--runs 3] [--output-length 160] [--stream-interval 10] [--out DIR] [--write-doc FILE]\n');
  process.exit(2);
}

type Client = 'duplex-bench' | 'autocannon';
interface Row {
  run: number;
  client: Client;
  stream: boolean;
  requests_per_s: number;
  sse_events_per_s: number;
  /** Client CPU seconds per wall second, from /proc just before it exits (autocannon) or its own count (duplex-bench). */
  client_cores: number | null;
  errors: number;
}

let stopping = false;
installInterrupts(() => (stopping = true));

/** The prompt and body both clients send (the one duplex-bench builds for request 0). */
const PROMPT = 'request0 the of and to in is was for on that with as by at from';

async function one(run: number, client: Client, stream: boolean): Promise<Row> {
  const dir = join(String(values.out), `run-${run}`, `${stream ? 'stream' : 'whole'}-${client}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const stub = await startMock(dir, ['--protocol', 'http', '--stub', 'max-throughput', '--output-length', String(output_length), '--stream-interval', String(stream_interval)], ROOT, HTTP_LISTENING);
  const events_per_response = stream ? Math.ceil(output_length / stream_interval) + 2 : 0; // text events, usage, [DONE]
  const out = openLog(join(dir, 'client.stdout.log'));
  const err = openLog(join(dir, 'client.stderr.log'));
  let row: Row;
  if (client === 'duplex-bench') {
    const args = ['--import', 'tsx', join(ROOT, 'apps/probe/src/main.ts'), 'http', '--url', stub.url, '--concurrency', String(connections), '--max-connections', String(connections), '--duration', String(duration_s), '--max-tokens', String(output_length), '--input-tokens', '16', '--output', dir, '--quiet', '--allow-unqualified', '--model', 'stub'];
    if (!stream) args.push('--no-stream');
    const child = spawnTracked('client', process.execPath, args, out, err);
    await exited(child, (duration_s + 60) * 1000);
    const s = JSON.parse(readFileSync(runFile(dir, 'summary'), 'utf8')) as HttpSummary;
    row = { run, client, stream, requests_per_s: s.requests_per_s ?? NaN, sse_events_per_s: s.client.sse_events / s.window_s, client_cores: s.client.cpu_cores.total, errors: s.requests.failed };
  } else {
    const body = requestBody(PROMPT, { endpoint: 'chat', model: 'stub', max_tokens: output_length, stream, ignore_eos: false });
    const args = [join(ROOT, 'node_modules/autocannon/autocannon.js'), '-c', String(connections), '-p', '1', '-d', String(duration_s), '-m', 'POST', '-H', 'content-type=application/json', '-b', body, '-n', '-j', `${stub.url}/v1/chat/completions`];
    const child = spawnTracked('client', process.execPath, args, out, err);
    // CPU read just before the end: autocannon prints its JSON and exits right after the duration.
    let cpu_s: number | null = null;
    const sampler = setInterval(() => (cpu_s = procCpuSeconds(child) ?? cpu_s), 250);
    await exited(child, (duration_s + 60) * 1000);
    clearInterval(sampler);
    const r = JSON.parse(readFileSync(join(dir, 'client.stdout.log'), 'utf8')) as { requests: { total: number }; duration: number; errors: number; non2xx: number };
    const rps = r.requests.total / r.duration;
    row = { run, client, stream, requests_per_s: rps, sse_events_per_s: rps * events_per_response, client_cores: cpu_s === null ? null : cpu_s / r.duration, errors: r.errors + r.non2xx };
  }
  await stopMock(stub);
  process.stderr.write(`run ${run}, ${stream ? 'streamed' : 'whole'}, ${client}: ${row.requests_per_s.toFixed(0)} requests/s, ${row.sse_events_per_s.toFixed(0)} SSE events/s, client ${row.client_cores?.toFixed(2) ?? '-'} cores, ${row.errors} errors\n`);
  return row;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];
const range = (v: number[], digits = 0) => `${median(v).toFixed(digits)} [${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}]`;

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (let run = 1; run <= runs && !stopping; run++) {
    for (const stream of [true, false]) {
      const order: Client[] = run % 2 === 1 ? ['duplex-bench', 'autocannon'] : ['autocannon', 'duplex-bench'];
      for (const client of order) if (!stopping) rows.push(await one(run, client, stream));
    }
  }
  writeFileSync(join(String(values.out), 'results.json'), JSON.stringify(rows, null, 1));
  const lines = [
    '| mode | client | requests/s, median [min–max] | SSE events/s, median [min–max] | client CPU cores (median) | errors | duplex-bench / autocannon requests/s, per run: median [min–max] |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const stream of [true, false]) {
    const ratios: number[] = [];
    for (let run = 1; run <= runs; run++) {
      const a = rows.find((r) => r.run === run && r.stream === stream && r.client === 'duplex-bench');
      const b = rows.find((r) => r.run === run && r.stream === stream && r.client === 'autocannon');
      if (a && b) ratios.push(a.requests_per_s / b.requests_per_s);
    }
    for (const client of ['duplex-bench', 'autocannon'] as Client[]) {
      const mine = rows.filter((r) => r.stream === stream && r.client === client);
      if (mine.length === 0) continue;
      const cores = mine.map((r) => r.client_cores).filter((c): c is number => c !== null);
      lines.push(
        `| ${stream ? `streamed, ${Math.ceil(output_length / stream_interval)} text events` : 'whole response'} | ${client} | ${range(mine.map((r) => r.requests_per_s))} | ${stream ? range(mine.map((r) => r.sse_events_per_s)) : '-'} | ${cores.length ? median(cores).toFixed(2) : '-'} | ${mine.reduce((a, r) => a + r.errors, 0)} | ${client === 'duplex-bench' && ratios.length ? `${range(ratios, 2)}×` : ''} |`,
      );
    }
  }
  const note = `${connections} connections each, ${duration_s} s per run, ${runs} runs, a fresh max-throughput stub (${output_length} characters, ${stream_interval} per SSE event) per client run. duplex-bench parses every SSE event and times each request (closed loop, \`--concurrency ${connections}\`); autocannon counts bytes only, so its SSE events/s is its requests/s × events per response.`;
  const table = `${lines.join('\n')}\n\n${note}`;
  process.stdout.write(`${table}\n`);
  if (values['write-doc']) {
    const host = hostLine(hostInfo(undefined));
    writeDoc(String(values['write-doc']), 'http-roofline', docSection('http-roofline', '### HTTP roofline: duplex-bench http beside autocannon', host, `node --import tsx tools/bench/http-roofline.ts ${commandLine(process.argv.slice(2))}`, new Date().toISOString().slice(0, 10), table));
  }
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
