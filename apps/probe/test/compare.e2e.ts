import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { probe } from './in-process.spec-helpers';
import type { CompareFile } from '@duplex-bench/experiments';
import type { RunSummary } from '@duplex-bench/results';

// The comparison itself (the interleaved order, the resume, the ratio, interval and rank test, the
// warnings) is proven against fake runs in libs/experiments/src/compare.spec.ts; here, one real one.
jest.setTimeout(120_000);

describe('compare against two model mocks, TTFP 100 ms and 200 ms', () => {
  let fast: MockServer;
  let slow: MockServer;
  beforeAll(async () => {
    fast = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 } });
    slow = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 200, rtf: 0.5 } });
  });
  afterAll(async () => {
    await fast.close();
    await slow.close();
  });
  const arm = (label: string, url: string) => `${label}=--url ${url} --concurrency 1 --duration 1`;

  it("runs each arm's flags as a real run and reads its TTFP back from the run's summary", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compare-'));
    const { code, stdout } = await probe(['compare', '--arm', arm('A', fast.url), '--arm', arm('B', slow.url), '--reps', '2', '--seed', '3', '--output', dir]);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'compare.json'), 'utf8')) as CompareFile;
    expect(file.runs).toHaveLength(4);
    // Each arm's --url reached its runs: each mock served one session a repetition.
    expect([fast.stats().sessions.opened, slow.stats().sessions.opened]).toEqual([2, 2]);
    // Each run's figure is the one its own summary.json holds.
    for (const r of file.runs) {
      const summary = JSON.parse(await readFile(join(r.dir, 'summary.json'), 'utf8')) as RunSummary;
      expect(r.values.ttfp_p99_ms).toBe(summary.duplex?.ttfp_ms.p99);
      expect(r.values.ttfp_p99_ms).toBeGreaterThan(0);
    }
    expect(stdout).toMatch(/^ttfp_p99_ms: A median .*; B median .*; B\/A /m);
    expect(file.project).toMatchObject({ commit: expect.any(String) });
  });
});
