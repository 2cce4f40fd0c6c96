import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpStub, type HttpStub } from '@duplex-bench/mock-servers';
import type { HttpSummary } from '@duplex-bench/http-load';
import { runCli } from './spawn.spec-helpers';

jest.setTimeout(60_000);

/** Runs `duplex-bench http` as a user would (node + tsx), bounded in time. */
const probe = (args: string[]) => runCli(['http', ...args], 45_000);
const cli = (args: string[]) => runCli(args, 45_000);

describe('duplex-bench http, bad input', () => {
  // Out-of-range values are the flag table's (HTTP_FLAGS through parseFlags); a combination of flags
  // is httpRun's, each of its refusals proven in libs/run's run-http.spec.ts: one stays here to hold
  // the command's rejected UsageError to one line on stderr and status 2.
  it.each([
    [['--url', 'http://127.0.0.1:9', '--rate', '0', '--requests', '5', '--output', '/tmp/x'], /^error: --rate must be greater than 0, got 0\n$/],
    [['--url', 'http://127.0.0.1:9', '--rate', '5', '--requests', '-2', '--output', '/tmp/x'], /^error: --requests must be at least 1, got -2\n$/],
    [['--url', 'http://127.0.0.1:9', '--rate', '5', '--concurrency', '2', '--requests', '5', '--output', '/tmp/x'], /^error: give one of --rate R \(open loop\) or --concurrency N \(closed loop\)\n$/],
  ])('%j: one line on stderr, status 2', async (args, message) => {
    const { code, stderr, stdout } = await probe(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  it('an unreachable URL: one line, status 1', async () => {
    const { code, stderr } = await probe(['--url', 'http://127.0.0.1:9', '--rate', '5', '--requests', '5', '--output', '/tmp/duplex-bench-http-unreachable']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:9\/v1\/models: .*ECONNREFUSED/m);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('duplex-bench http against a server that fails every request', () => {
  it('exits 1 and ends with FAILED naming the errors, never QUALIFIED; the JSON says verdict failed', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"engine down"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const dir = await mkdtemp(join(tmpdir(), 'http-failed-'));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { code, stdout, stderr } = await probe(['--url', url, '--model', 'm', '--concurrency', '1', '--requests', '3', '--output', dir, '--json']);
      expect(code).toBe(1);
      const last = stderr.trim().split('\n').pop();
      expect(last).toBe('FAILED: no request completed (3 http_status)');
      expect(stderr).not.toMatch(/QUALIFIED/);
      expect(JSON.parse(stdout.trim())).toMatchObject({ verdict: 'failed', failed_reason: (last as string).slice('FAILED: '.length), requests: { completed: 0 } });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('duplex-bench http --processes, a child that fails before the gate', () => {
  it('ends within the start bound, naming the process and its reason; the others are stopped', async () => {
    const stub = await startHttpStub({ kind: 'max-throughput', output_length: 10 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'http-fail-'));
      // p1 is a file, so process 1 cannot create its output directory and exits before the gate.
      await writeFile(join(dir, 'p1'), 'not a directory');
      const t0 = Date.now();
      const { code, stderr } = await probe(['--url', stub.url, '--rate', '10', '--duration', '30', '--processes', '2', '--output', dir, '--start-timeout-s', '20']);
      expect(code).toBe(1);
      expect(stderr).toMatch(/error: process 1 exited before the start gate \(1\): cannot create output directory/);
      expect(Date.now() - t0).toBeLessThan(20_000);
      // Nothing was sent: no process passed the gate.
      expect(stub.stats().requests).toBe(0);
    } finally {
      await stub.close();
    }
  });
});

describe('duplex-bench http against the variable-response stub', () => {
  let stub: HttpStub | undefined;
  afterAll(() => stub?.close());

  it("--processes 2: children split the requests and start at one gate; the merged summary adds them up and pools their histograms; the launcher alone scrapes the server", async () => {
    stub ??= await startHttpStub({ kind: 'variable-response', first_chunk_ms: 50, inter_token_ms: 5, output_len_mean: 10 });
    const dir = await mkdtemp(join(tmpdir(), 'http-p2-'));
    // What is tested is the split and the merge, not the pacing: a late send on a busy host is allowed.
    const scrape = ['--server-metrics', `${stub.url}/metrics`, '--server-metrics-interval-s', '0.5'];
    const { code, stdout, stderr } = await probe(['--url', stub.url, '--concurrency', '5', '--requests', '31', '--processes', '2', '--output', dir, '--json', '--allow-unqualified', ...scrape]);
    expect(stderr).not.toMatch(/^error/m);
    expect(code).toBe(0);
    const merged = JSON.parse(stdout.trim().split('\n').pop() as string) as HttpSummary & { processes: number };
    const parts = await Promise.all([0, 1].map(async (i) => JSON.parse(await readFile(join(dir, `p${i}`, 'summary.json'), 'utf8')) as HttpSummary));
    // 31 requests and 5 lanes split 16 + 15 and 3 + 2.
    expect(parts.map((p) => p.requests.sent)).toEqual([16, 15]);
    expect(parts.map((p) => p.load.concurrency)).toEqual([3, 2]);
    expect(merged).toMatchObject({ processes: 2, requests: { sent: 31, completed: 31 }, load: { mode: 'closed', concurrency: 5 } });
    expect(merged.latency_ms.ttft.raw.count).toBe(31);
    // One scraper, the launcher's, from before the gate to after the last child: the stub's own TTFT histogram grew by the run's requests.
    expect(merged.server_metrics?.histograms['vllm:time_to_first_token_seconds']?.count).toBe(31);
    expect(parts.map((p) => p.server_metrics)).toEqual([undefined, undefined]);
    expect(merged.latency_ms.itl.raw.count).toBe(parts[0].latency_ms.itl.raw.count + parts[1].latency_ms.itl.raw.count);
    // The pooled max is the larger of the two, to the histograms' 3 significant digits.
    const max = Math.max(parts[0].latency_ms.ttft.raw.max as number, parts[1].latency_ms.ttft.raw.max as number);
    expect(Math.abs((merged.latency_ms.ttft.raw.max as number) - max) / max).toBeLessThan(0.002);
    // Different seeds: the two processes did not send the same prompts.
    const first = await Promise.all([0, 1].map(async (i) => (await readFile(join(dir, `p${i}`, 'requests.jsonl'), 'utf8')).split('\n')[0]));
    expect(first[0]).not.toBe(first[1]);
    expect(stub.stats().completed).toBeGreaterThanOrEqual(31);
    // `merge` of the two process directories gives the same pooled figures.
    const again = await cli(['merge', join(dir, 'p0'), join(dir, 'p1'), '--output', join(dir, 'merged'), '--json']);
    expect(again.code).toBe(merged.qualified ? 0 : 3);
    const remerged = JSON.parse(again.stdout.trim().split('\n').pop() as string) as HttpSummary;
    expect(remerged.requests).toEqual(merged.requests);
    expect(remerged.latency_ms).toEqual(merged.latency_ms);
  });

  it('--processes 2: fails (exit 1), naming server_metrics.jsonl, when the launcher cannot write it, and still pools the figures', async () => {
    stub ??= await startHttpStub({ kind: 'variable-response', first_chunk_ms: 50, inter_token_ms: 5, output_len_mean: 10 });
    const dir = await mkdtemp(join(tmpdir(), 'http-p2-unwritable-'));
    // The part file's place taken by a directory: it cannot be written (EISDIR), as on a full disk.
    await mkdir(join(dir, 'server_metrics.jsonl.part'));
    const scrape = ['--server-metrics', `${stub.url}/metrics`, '--server-metrics-interval-s', '0.5'];
    const { code, stdout, stderr } = await probe(['--url', stub.url, '--concurrency', '2', '--requests', '6', '--processes', '2', '--output', dir, '--allow-unqualified', ...scrape]);
    expect(code).toBe(1);
    const line = /cannot write \S+\/server_metrics\.jsonl \(.*EISDIR.*\); kept the summary's server_metrics block$/;
    expect(stderr.split('\n').filter((l) => l.startsWith('error: '))).toEqual([expect.stringMatching(line)]);
    expect(stdout.split('\n').filter((l) => l.startsWith('FAILED: '))).toEqual([expect.stringMatching(new RegExp(`^FAILED: ${line.source}`))]);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as HttpSummary;
    expect(summary.requests.completed).toBe(6);
    expect(summary.server_metrics?.histograms['vllm:time_to_first_token_seconds']?.count).toBe(6);
    expect((await readdir(dir)).filter((f) => f.startsWith('server_metrics'))).toEqual([]);
  });
});
