import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { probe } from './in-process.spec-helpers';
import type { CompareFile } from '@duplex-bench/experiments';

jest.setTimeout(180_000);

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
  const arm = (label: string, url: string) => `${label}=--url ${url} --concurrency 2 --duration 1.5`;

  it('reports the 2x TTFP with an interval excluding 1, arms interleaved in random order, each run recorded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compare-'));
    const { code, stdout } = await probe(['compare', '--arm', arm('A', fast.url), '--arm', arm('B', slow.url), '--reps', '4', '--seed', '3', '--output', dir]);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'compare.json'), 'utf8')) as CompareFile;
    const [ttfp] = file.results;
    expect(ttfp.ratio).toBeGreaterThan(1.7);
    expect(ttfp.ratio).toBeLessThan(2.3);
    expect(ttfp.interval_95?.[0]).toBeGreaterThan(1);
    expect(ttfp.verdict).toMatch(/^B is higher than A \(the interval excludes 1, rank test p 0\.0286\)$/);
    expect(stdout).toMatch(/ttfp_p99_ms: A median .*B\/A .*B is higher than A/);
    expect(file.runs).toHaveLength(8);
    // Both orders occur: a fixed order would measure the run position.
    const firstOfRep = [1, 2, 3, 4].map((rep) => file.runs.find((r) => r.rep === rep && r.position === 0)?.arm);
    expect(new Set(firstOfRep).size).toBe(2);
    expect(file.warnings).toEqual([]);
    expect(file.project).toMatchObject({ commit: expect.any(String) });
  });

  it('two identical arms: a ratio near 1 and no verdict (3 runs an arm can never give one)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compare-same-'));
    await probe(['compare', '--arm', arm('A', fast.url), '--arm', arm('A2', fast.url), '--reps', '3', '--seed', '5', '--output', dir]);
    const [ttfp] = (JSON.parse(await readFile(join(dir, 'compare.json'), 'utf8')) as CompareFile).results;
    expect(ttfp.ratio).toBeGreaterThan(0.9);
    expect(ttfp.ratio).toBeLessThan(1.1);
    expect(ttfp.rank_test_p).toBeGreaterThanOrEqual(0.1);
    expect(ttfp.verdict).toMatch(/^no difference shown/);
  });

  it('warns when the arms differ in more than one setting', async () => {
    const { code, stderr } = await probe(['compare', '--arm', arm('A', fast.url), '--arm', 'B=--url ws://127.0.0.1:9/v1/realtime --concurrency 3 --duration 1.5', '--reps', '2', '--output', await mkdtemp(join(tmpdir(), 'compare-w-'))]);
    expect(code).toBe(0);
    expect(stderr).toMatch(/warning: the arms differ in 2 settings \(--url, --concurrency\)/);
  });
});
