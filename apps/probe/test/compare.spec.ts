import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { probe } from './in-process.spec-helpers';
import { bootstrapRatio, mannWhitneyP, seeded, type CompareFile } from '../src/sweep/compare-command';

jest.setTimeout(180_000);

describe('mannWhitneyP', () => {
  it('is exact: complete separation of 4 and 4 runs gives 2/70; of 3 and 3, 2/20; interleaved arms, 1', () => {
    expect(mannWhitneyP([1, 2, 3, 4], [5, 6, 7, 8])).toBeCloseTo(2 / 70, 10);
    expect(mannWhitneyP([5, 6, 7, 8], [1, 2, 3, 4])).toBeCloseTo(2 / 70, 10);
    expect(mannWhitneyP([1, 2, 3], [4, 5, 6])).toBeCloseTo(0.1, 10);
    expect(mannWhitneyP([1, 4, 5, 8], [2, 3, 6, 7])).toBe(1);
  });
});

describe('bootstrapRatio', () => {
  it('gives B/A of medians, and an interval that excludes 1 only when the arms differ', () => {
    const random = seeded(7);
    const differ = bootstrapRatio([100, 101, 99, 100, 102], [200, 198, 203, 201, 199], random);
    expect(differ.ratio).toBeCloseTo(2, 2);
    expect(differ.interval?.[0]).toBeGreaterThan(1);
    const same = bootstrapRatio([100, 104, 97, 101, 99], [98, 103, 100, 102, 97], random);
    expect(same.interval?.[0]).toBeLessThan(1);
    expect(same.interval?.[1]).toBeGreaterThan(1);
  });
});

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
