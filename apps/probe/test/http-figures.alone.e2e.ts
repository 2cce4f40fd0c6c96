import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpStub, type HttpStub } from '@duplex-bench/mock-servers';
import type { HttpSummary } from '@duplex-bench/http-load';
import { runCli } from './spawn.spec-helpers';

// The server's figures as the client measures them, held to the stub's own to 10 %: a client
// delayed by the suites beside it adds its own wait to every TTFT (a full test run read 223 ms
// for 200), so this runs alone, with nothing beside it.
jest.setTimeout(60_000);

/** Runs `duplex-bench http` as a user would (node + tsx), bounded in time. */
const probe = (args: string[]) => runCli(['http', ...args], 45_000);

describe('duplex-bench http against the variable-response stub, alone', () => {
  let stub: HttpStub | undefined;
  afterAll(() => stub?.close());

  it('at 50 requests/s with TTFT mean 200 ms and ITL 20 ms, reports TTFT p50 and ITL p50 within 10% of them, qualified', async () => {
    // The stub's first-chunk time is lognormal with mean 200 ms and cov 0.2: its median is 200/sqrt(1.04) = 196 ms.
    stub = await startHttpStub({ kind: 'variable-response', first_chunk_ms: 200, first_chunk_spread: 0.2, inter_token_ms: 20, output_len_mean: 30, output_len_spread: 0.3 });
    const dir = await mkdtemp(join(tmpdir(), 'http-'));
    // TTFT and ITL are what this test is for. Whether the client kept its schedule is asserted on the
    // median send lag, which a client that falls behind fails: a stall of the shared host holds back
    // a few requests (CI, 2026-12-01: one of 415 over 25 ms, then a p99 of 19 ms in a full test run,
    // where runs alone here held a 4-6 ms maximum and a 1.2 ms median), so --allow-unqualified keeps
    // such a stall from failing a test about the server's figures. http-load.e2e.ts tests the verdict.
    const { code, stdout, stderr } = await probe(['--url', stub.url, '--rate', '50', '--duration', '8', '--warmup-s', '1', '--output', dir, '--json', '--allow-unqualified']);
    expect(stderr).not.toMatch(/error/);
    const summary = JSON.parse(stdout.trim().split('\n').pop() as string) as HttpSummary;
    expect(code).toBe(0);
    expect(summary.client.send_lag_ms.p50 as number).toBeLessThan(5);
    // When it is unqualified, only because of a late start (a stalled host shows here, by name).
    if (!summary.qualified) expect(summary.unqualified_reason).toMatch(/fell behind its schedule/);
    expect(summary.requests.failed).toBe(0);
    expect(summary.requests.sent).toBeGreaterThan(300); // Poisson at 50/s over 8 s: 400 expected
    const ttft = summary.latency_ms.ttft.steady.p50 as number;
    const itl = summary.latency_ms.itl.steady.p50 as number;
    expect(Math.abs(ttft - 200) / 200).toBeLessThan(0.1);
    expect(Math.abs(itl - 20) / 20).toBeLessThan(0.1);
    expect(summary.tokens.origin).toBe('usage');
    // The stub sends its headers at once, as a streaming server does: first byte is not first token.
    expect(summary.latency_ms.first_byte.steady.p50 as number).toBeLessThan(50);
    // What the stub counted agrees with what the client counted.
    expect(stub.stats().completed).toBe(summary.requests.completed);
    const written = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as HttpSummary;
    expect(written.requests).toEqual(summary.requests);
    const lines = (await readFile(join(dir, 'requests.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(summary.requests.sent);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as { model: string };
    expect(run.model).toBe('stub');
  });
});
