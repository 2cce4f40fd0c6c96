import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
import { startHttpStub, startMockServer } from '@duplex-bench/mock-servers';
import type { HttpSummary } from '@duplex-bench/http-load';
import type { RunSummary } from '@duplex-bench/results';
import { httpCommand } from '../src/http/http-command';
import { runCommand } from '../src/run/run-command';
import { parseRunOptions } from '../src/run/run-options';

jest.setTimeout(60_000);

/**
 * A server's /metrics as vLLM-Omni lays it out (docs/source/usage/metrics: `vllm:omni_audio_ttfp_s`,
 * labels model_name, stage, replica), whose TTFP buckets move at every scrape: 10 answers in
 * (0.1, 0.2] s and 10 in (0.2, 0.5] s, on top of 1,000 slow ones (0.5-5 s) from before the run.
 * Over the run (first to last scrape) that gives p50 = 0.2 s, p90 = 0.44 s, p99 = 0.494 s whatever
 * the number of scrapes; without the deltas the slow ones would set every percentile.
 * Scrape number `failAt` answers 500.
 */
function metricsServer(failAt: number): Promise<{ server: Server; url: string; served: () => number; failed: () => number }> {
  let fast = 0;
  let slow = 0;
  let requests = 0;
  let failures = 0;
  const server = createServer((req, res) => {
    requests++;
    if (requests === failAt) {
      failures++;
      res.writeHead(500).end('busy\n');
      return;
    }
    fast += 10;
    slow += 10;
    const old = 1000;
    const l = 'model_name="m",stage="1",replica="0"';
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(
      [
        '# HELP vllm:omni_audio_ttfp_s Time from request arrival to first audio packet/frame',
        '# TYPE vllm:omni_audio_ttfp_s histogram',
        `vllm:omni_audio_ttfp_s_bucket{${l},le="0.1"} 0.0`,
        `vllm:omni_audio_ttfp_s_bucket{${l},le="0.2"} ${fast}.0`,
        `vllm:omni_audio_ttfp_s_bucket{${l},le="0.5"} ${fast + slow}.0`,
        `vllm:omni_audio_ttfp_s_bucket{${l},le="5.0"} ${fast + slow + old}.0`,
        `vllm:omni_audio_ttfp_s_bucket{${l},le="+Inf"} ${fast + slow + old}.0`,
        `vllm:omni_audio_ttfp_s_count{${l}} ${fast + slow + old}.0`,
        `vllm:omni_audio_ttfp_s_sum{${l}} ${(fast * 0.15 + slow * 0.3 + old * 2).toFixed(3)}`,
        '# HELP vllm:omni_num_requests_running In-flight requests',
        '# TYPE vllm:omni_num_requests_running gauge',
        `vllm:omni_num_requests_running{model_name="m"} ${requests % 4}.0`,
        '',
      ].join('\n'),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, served: () => requests - failures, failed: () => failures }),
    ),
  );
}

function quietIo(): { io: RunIo; stderr: () => string } {
  let stderr = '';
  return {
    stderr: () => stderr,
    io: {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s), isTTY: false },
      signals: new EventEmitter(),
      exitNow: (code) => {
        throw new Error(`exitNow(${code}) in a test`);
      },
      argv: [],
    },
  };
}

describe('run --server-metrics', () => {
  it("gives the server's TTFP percentiles from its bucket deltas over the run, beside the client's, and counts a failed scrape without stopping", async () => {
    const metrics = await metricsServer(3);
    const mock = await startMockServer({ port: 0, profile: 'nemotron' });
    const out = await mkdtemp(join(tmpdir(), 'probe-server-metrics-'));
    const { io, stderr } = quietIo();
    let code: number;
    try {
      code = await runCommand(parseRunOptions(['--url', mock.url, '--concurrency', '4', '--duration', '3', '--output', out, '--quiet', '--allow-unqualified', '--server-metrics', metrics.url, '--server-metrics-interval-s', '0.5']), io);
    } finally {
      await mock.close();
      await new Promise((r) => metrics.server.close(r));
    }
    expect({ code, stderr: stderr() }).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
    const m = summary.server_metrics;
    if (!m) throw new Error('no server_metrics block');
    // Every answered scrape, and the one that failed, counted; the run went on to complete.
    expect(m.scrapes).toMatchObject({ ok: metrics.served(), failed: 1, first_failure: 'HTTP 500' });
    expect(m.scrapes.ok).toBeGreaterThanOrEqual(6);
    expect(summary.sessions.completed).toBe(4);
    expect(stderr()).toContain('server metrics: scrape of');
    const ttfp = m.histograms['vllm:omni_audio_ttfp_s'];
    expect(ttfp).toMatchObject({ kind: 'ttfp', unit: 'ms', count: 20 * (metrics.served() - 1), p50: 200, p90: 440, p99: 494 });
    // Beside it, the client's TTFP of the same run (the mock answers in about 200 ms), with its origin.
    expect(ttfp.client).toMatchObject({ figure: 'duplex.ttfp_ms', unit: 'ms', count: summary.duplex?.ttfp_ms.count });
    expect(ttfp.client?.p50).toBeGreaterThan(150);
    // server_metrics.jsonl: one line per scrape on the client's clock, the failed one among them.
    const rows = (await readFile(join(out, 'server_metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { t_s: number; ok: boolean; samples?: Array<[string, Record<string, string>, number]>; error?: string });
    expect(rows).toHaveLength(metrics.served() + 1);
    expect(rows.filter((r) => !r.ok)).toEqual([expect.objectContaining({ error: 'HTTP 500' })]);
    expect(rows.every((r, i) => i === 0 || r.t_s > rows[i - 1].t_s)).toBe(true);
    expect(rows[0].samples?.some(([name]) => name === 'vllm:omni_num_requests_running')).toBe(true);
    expect(m.window_s?.[0]).toBe(rows[0].t_s);
  });

  it('runs on when the server has no /metrics at all, and says so', async () => {
    const mock = await startMockServer({ port: 0 });
    const out = await mkdtemp(join(tmpdir(), 'probe-server-metrics-'));
    const { io, stderr } = quietIo();
    let code: number;
    try {
      // A port nothing listens on: every scrape is refused.
      code = await runCommand(parseRunOptions(['--url', mock.url, '--concurrency', '2', '--duration', '1', '--output', out, '--quiet', '--allow-unqualified', '--server-metrics', 'http://127.0.0.1:9/metrics']), io);
    } finally {
      await mock.close();
    }
    expect(code).toBe(0);
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
    expect(summary.server_metrics?.scrapes.ok).toBe(0);
    expect(summary.server_metrics?.scrapes.failed).toBeGreaterThanOrEqual(2);
    expect(summary.server_metrics?.histograms).toEqual({});
    expect(stderr().match(/server metrics: scrape of/g)).toHaveLength(1);
  });

  it("http: the stub's own vLLM TTFT and E2E histograms, one observation per request the run completed, beside the client's", async () => {
    const stub = await startHttpStub({ kind: 'variable-response', port: 0, first_chunk_ms: 100, first_chunk_spread: 0.1, inter_token_ms: 5, output_len_mean: 20 });
    const out = await mkdtemp(join(tmpdir(), 'probe-server-metrics-http-'));
    const { io, stderr } = quietIo();
    let code: number;
    try {
      code = await httpCommand(['--url', stub.url, '--rate', '20', '--duration', '3', '--output', out, '--quiet', '--allow-unqualified', '--server-metrics', `${stub.url}/metrics`, '--server-metrics-interval-s', '0.5'], io);
    } finally {
      await stub.close();
    }
    expect({ code, stderr: stderr() }).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as HttpSummary;
    const m = summary.server_metrics;
    if (!m) throw new Error('no server_metrics block');
    expect(m.scrapes.failed).toBe(0);
    const ttft = m.histograms['vllm:time_to_first_token_seconds'];
    const e2e = m.histograms['vllm:e2e_request_latency_seconds'];
    expect({ ttft: ttft.count, e2e: e2e.count }).toEqual({ ttft: summary.requests.completed, e2e: summary.requests.completed });
    // About 100 ms from arrival to the first token, in vLLM's buckets (0.08, 0.1] and (0.1, 0.25].
    expect(ttft.p50).toBeGreaterThan(80);
    expect(ttft.p50).toBeLessThan(250);
    expect(ttft.client).toMatchObject({ figure: 'latency_ms.ttft.raw', count: summary.requests.completed });
  });
});
