/**
 * HTTP correctness at a low rate: `duplex-bench http` in open loop against the variable-response
 * stub, whose time to first output and inter-token time are known. Passes when no request failed,
 * the run qualified, and the reported TTFT p50 and ITL p50 are within 10% of what the stub was set
 * to (the stub's first-chunk time is lognormal: its median is mean / sqrt(1 + cov^2)).
 *
 *   node --import tsx tools/bench/http-correctness.ts [--rate 5] [--duration 20] [--ttft-ms 200] [--itl-ms 20]
 *        [--out out/bench-http-correctness] [--write-doc docs/performance.md]
 *
 * Every wait is bounded; only processes started here are signalled, by PID; traffic stays on 127.0.0.1.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { HttpSummary } from '@duplex-bench/http-load';
import { commandLine, docSection, writeDoc } from './doc';
import { hostInfo, hostLine } from './host';
import { exited, HTTP_LISTENING, installInterrupts, openLog, ROOT, spawnTracked, startMock, stopMock } from './processes';
import { runFile } from '@duplex-bench/results';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '5' },
    duration: { type: 'string', default: '20' },
    'ttft-ms': { type: 'string', default: '200' },
    'itl-ms': { type: 'string', default: '20' },
    out: { type: 'string', default: 'out/bench-http-correctness' },
    'write-doc': { type: 'string' },
  },
});
const rate = Number(values.rate);
const duration_s = Number(values.duration);
const ttft = Number(values['ttft-ms']);
const itl = Number(values['itl-ms']);
if (!(rate > 0) || !(duration_s > 0 && duration_s <= 600) || !(ttft > 0) || !(itl > 0)) {
  process.stderr.write('usage: http-correctness.ts [--rate 5] [--duration 20] [--ttft-ms 200] [--itl-ms 20] [--out DIR] [--write-doc FILE]\n');
  process.exit(2);
}
installInterrupts(() => undefined);

async function main(): Promise<number> {
  const dir = String(values.out);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cov = 0.2;
  const stub = await startMock(dir, ['--protocol', 'http', '--first-chunk-ms', String(ttft), '--first-chunk-spread', String(cov), '--inter-token-ms', String(itl), '--output-len-mean', '50'], ROOT, HTTP_LISTENING);
  const args = ['--import', 'tsx', join(ROOT, 'apps/probe/src/main.ts'), 'http', '--url', stub.url, '--rate', String(rate), '--duration', String(duration_s), '--output', dir, '--quiet', '--allow-unqualified'];
  const client = spawnTracked('client', process.execPath, args, openLog(join(dir, 'client.stdout.log')), openLog(join(dir, 'client.stderr.log')));
  await exited(client, (duration_s + 90) * 1000);
  await stopMock(stub);
  const s = JSON.parse(readFileSync(runFile(dir, 'summary'), 'utf8')) as HttpSummary;
  const expectedTtft = ttft / Math.sqrt(1 + cov * cov);
  const ttftP50 = s.latency_ms.ttft.raw.p50 as number;
  const itlP50 = s.latency_ms.itl.raw.p50 as number;
  const off = (v: number, want: number) => Math.abs(v - want) / want;
  const pass = s.requests.failed === 0 && s.qualified && off(ttftP50, expectedTtft) < 0.1 && off(itlP50, itl) < 0.1;
  const table = [
    '| figure | set on the stub | reported | off by |',
    '| --- | --- | --- | --- |',
    `| TTFT p50, ms | ${expectedTtft.toFixed(1)} (median of lognormal mean ${ttft}, cov ${cov}) | ${ttftP50} | ${(off(ttftP50, expectedTtft) * 100).toFixed(1)}% |`,
    `| ITL p50, ms | ${itl} | ${itlP50} | ${(off(itlP50, itl) * 100).toFixed(1)}% |`,
    `| TPOT p50, ms | ${itl} | ${s.latency_ms.tpot.raw.p50} | ${(off(s.latency_ms.tpot.raw.p50 as number, itl) * 100).toFixed(1)}% |`,
    '',
    `${s.requests.sent} requests at ${rate}/s (Poisson) for ${duration_s} s: ${s.requests.completed} completed, ${s.requests.failed} failed; ${s.qualified ? 'qualified' : 'UNQUALIFIED'} (client send lag p99 ${s.client.send_lag_ms.p99} ms, max ${s.client.send_lag_ms.max} ms); ${pass ? 'PASS' : 'FAIL'}.`,
  ].join('\n');
  process.stdout.write(`${table}\n`);
  if (values['write-doc']) {
    const host = hostLine(hostInfo(undefined));
    writeDoc(String(values['write-doc']), 'http-correctness', docSection('http-correctness', '### HTTP correctness at a low rate', host, `node --import tsx tools/bench/http-correctness.ts ${commandLine(process.argv.slice(2))}`, new Date().toISOString().slice(0, 10), table));
  }
  return pass ? 0 : 1;
}

void main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
