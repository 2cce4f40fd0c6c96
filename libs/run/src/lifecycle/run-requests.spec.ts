import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
// eslint-disable-next-line @nx/enforce-module-boundaries -- a spec loads the HTTP engine up front; the lib loads it lazily, so that the realtime commands never do
import { syntheticPrompts, type HttpSummary } from '@duplex-bench/http-load';
// A test-only edge: the HTTP stub is the run's counterpart on 127.0.0.1. Shipped run code may not
// import mock-servers; the boundary rule has no spec-file exemption to use instead.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startHttpStub, type HttpStub } from '@duplex-bench/mock-servers';
import { runFile } from '@duplex-bench/results';
import type { RunVerdict } from '../verdict';
import { runRequests, type HttpRunOptions } from './run-requests';

jest.setTimeout(30_000);

describe('runRequests', () => {
  let stub: HttpStub;
  let dir: string;
  beforeAll(async () => (stub = await startHttpStub({ kind: 'max-throughput', host: '127.0.0.1', port: 0, output_length: 8 })));
  afterAll(() => stub.close());
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'run-requests-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a closed loop of 5 requests: exit 0; summary.json, run.json and requests.jsonl of the 5; the summary rendered and emitted; the signals let go', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const emitted: unknown[] = [];
    const handlers = new Set<() => void>();
    const io: RunIo = {
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      signals: { on: (_s, fn) => handlers.add(fn), off: (_s, fn) => handlers.delete(fn) },
      exitNow: (code: number) => {
        throw new Error(`exitNow(${code})`);
      },
      argv: ['--url', stub.url, '--concurrency', '2', '--requests', '5', '--api-key', 'sk-secret'],
      emit: (s) => emitted.push(s),
    };
    const options: HttpRunOptions = {
      url: stub.url,
      endpoint: 'chat',
      model: 'stub',
      api_key: 'sk-secret',
      arrivals: 'poisson',
      concurrency: 2,
      requests: 5,
      warmup_s: 0,
      stream: true,
      max_tokens: 8,
      ignore_eos: false,
      seed: 1,
      output: dir,
      request_timeout_s: 10,
      max_connections: 4,
      // The pacing bound is not what this tests: a loaded host may hand a request over late.
      max_send_lag_ms: 5_000,
      allow_unqualified: false,
      processes: 1,
      start_timeout_s: 10,
      module: 'unused',
      metrics_linger_s: 0,
      otlp: null,
      dashboard: null,
      server_metrics: null,
    };
    const rendered: Array<{ summary: HttpSummary; output: string; v: RunVerdict }> = [];
    const render = (summary: HttpSummary, output: string, v: RunVerdict) => {
      rendered.push({ summary, output, v });
      return `rendered ${summary.requests.completed}`;
    };

    const code = await runRequests(options, syntheticPrompts({ kind: 'fixed', tokens: 16 }, 1), io, render, null);

    expect(err.filter((l) => l.startsWith('error'))).toEqual([]);
    expect(code).toBe(0);
    const summary = JSON.parse(await readFile(runFile(dir, 'summary'), 'utf8')) as HttpSummary & { verdict: string };
    expect(summary).toMatchObject({ kind: 'http', verdict: 'qualified', load: { mode: 'closed', concurrency: 2 }, requests: { sent: 5, completed: 5, failed: 0 } });
    // Eight characters of output each, one token each by the stub's usage.
    expect(summary.tokens).toMatchObject({ output: 40, origin: 'usage' });
    expect(summary.latency_ms.ttft.raw.count).toBe(5);
    const lines = (await readFile(runFile(dir, 'requests'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines.map((l) => (JSON.parse(l) as { index: number }).index).sort()).toEqual([0, 1, 2, 3, 4]);
    const run = JSON.parse(await readFile(runFile(dir, 'run'), 'utf8')) as { command: string[]; url: string; model: string };
    expect(run).toMatchObject({ url: stub.url, model: 'stub' });
    expect(run.command.slice(0, 2)).toEqual(['duplex-bench', 'http']);
    expect(JSON.stringify(run)).not.toContain('sk-secret');
    // The render callback is given the summary (the verdict rides on what is written and emitted).
    expect(rendered).toHaveLength(1);
    expect(rendered[0]).toMatchObject({ output: dir, v: { verdict: 'qualified' }, summary: { requests: summary.requests } });
    expect(out).toEqual(['rendered 5\n']);
    expect(emitted).toEqual([summary]);
    expect(stub.stats().completed).toBeGreaterThanOrEqual(5);
    expect(handlers.size).toBe(0);
  });
});
