import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lognormal, seeded } from '@duplex-bench/pacer';
import { parseArm, runCompare, type CompareFile, type ComparePlan } from './compare';
import { fakeRuns, flag, memoryIo, type RunModel } from './fake-runs.spec-helpers';
import type { PointRunner } from './point-runner';

// runCompare against fake runs: each run writes the summary.json a real one would, from servers
// modelled here, so the order, the recording and the statistics are proven without a process.

const FAST = 'ws://127.0.0.1:7001/v1/realtime';
const SLOW = 'ws://127.0.0.1:7002/v1/realtime';
const CLOSED = 'ws://127.0.0.1:9/v1/realtime';

/**
 * Servers by URL: TTFP p99 of 100 ms at FAST and 200 ms at SLOW, each run with 5% seeded noise;
 * nothing listens at any other URL, and its run fails to connect.
 */
function servers(seed: number): RunModel {
  const random = seeded(seed);
  const ttfp: Record<string, number> = { [FAST]: 100, [SLOW]: 200 };
  return (args) => {
    const url = flag(args, '--url');
    if (!ttfp[url]) return { code: 1, error: `error: cannot connect to ${url}: connect ECONNREFUSED` };
    return { qualified: true, duplex: { ttfp_ms: { p99: Math.round(lognormal(random, ttfp[url], 0.05) * 10) / 10 } } };
  };
}

const arm = (label: string, url: string, concurrency = 2) => parseArm(`${label}=--url ${url} --concurrency ${concurrency} --duration 1.5`);

describe('runCompare, against fake runs of two servers, TTFP 100 ms and 200 ms', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compare-spec-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function compare(plan: Omit<ComparePlan, 'metrics' | 'output' | 'script'>, model: RunModel) {
    const io = memoryIo();
    const fake = fakeRuns(model);
    const file = await runCompare({ metrics: ['ttfp_p99_ms'], output: dir, script: 'never started', run: fake.run, ...plan }, io);
    return { file, calls: fake.calls, stderr: io.written(), onDisk: JSON.parse(await readFile(join(dir, 'compare.json'), 'utf8')) as CompareFile };
  }

  it('reports the 2x TTFP with an interval excluding 1, arms interleaved in random order, each run recorded', async () => {
    const arms = [arm('A', FAST), arm('B', SLOW)];
    const { file, calls, onDisk } = await compare({ arms, reps: 4, seed: 3 }, servers(11));
    const [ttfp] = file.results;
    expect(ttfp.ratio).toBeGreaterThan(1.7);
    expect(ttfp.ratio).toBeLessThan(2.3);
    expect(ttfp.interval_95?.[0]).toBeGreaterThan(1);
    expect(ttfp.verdict).toMatch(/^B is higher than A \(the interval excludes 1, rank test p 0\.0286\)$/);
    expect(ttfp.per_arm.A.n).toBe(4);
    expect(ttfp.per_arm.B.n).toBe(4);
    expect(file.runs).toHaveLength(8);
    // Both orders occur: a fixed order would measure the run position.
    const firstOfRep = [1, 2, 3, 4].map((rep) => file.runs.find((r) => r.rep === rep && r.position === 0)?.arm);
    expect(new Set(firstOfRep).size).toBe(2);
    // Each repetition runs both arms, one after the other, in the order its positions say; each run is
    // recorded with its own directory and the figure its summary gave.
    expect(file.runs.map((r) => [r.rep, r.position])).toEqual([1, 2, 3, 4].flatMap((rep) => [[rep, 0], [rep, 1]]));
    expect(calls).toEqual(file.runs.map((r) => ['run', ...arms.find((a) => a.label === r.arm)?.flags ?? [], '--output', join(dir, `rep${r.rep}-${r.arm}`), '--quiet']));
    for (const r of file.runs) {
      expect(r).toMatchObject({ dir: join(dir, `rep${r.rep}-${r.arm}`), code: 0, qualified: true });
      const summary = JSON.parse(await readFile(join(r.dir, 'summary.json'), 'utf8')) as { duplex: { ttfp_ms: { p99: number } } };
      expect(r.values.ttfp_p99_ms).toBe(summary.duplex.ttfp_ms.p99);
    }
    expect(file.warnings).toEqual([]);
    expect(onDisk).toEqual(file);
  });

  it('orders a second invocation as the first did, and runs nothing again', async () => {
    const arms = [arm('A', FAST), arm('B', SLOW)];
    const first = await compare({ arms, reps: 4, seed: 3 }, servers(11));
    // A new seed is not taken: the comparison in the directory keeps its own.
    const again = await compare({ arms, reps: 4, seed: 99 }, servers(12));
    expect(again.calls).toEqual([]);
    expect(again.file.seed).toBe(3);
    expect(again.file.runs).toEqual(first.file.runs);
    expect(again.file.results).toEqual(first.file.results);
  });

  it('two identical arms: a ratio near 1 and no verdict (3 runs an arm can never give one)', async () => {
    const same = await compare({ arms: [arm('A', FAST), arm('A2', FAST)], reps: 3, seed: 5 }, servers(13));
    const [ttfp] = same.file.results;
    expect(ttfp.ratio).toBeGreaterThan(0.9);
    expect(ttfp.ratio).toBeLessThan(1.1);
    expect(ttfp.rank_test_p).toBeGreaterThanOrEqual(0.1);
    expect(ttfp.verdict).toMatch(/^no difference shown/);
  });

  it('gives no verdict on 3 runs an arm even for arms 2x apart: the rank test cannot go below 0.1', async () => {
    const [ttfp] = (await compare({ arms: [arm('A', FAST), arm('B', SLOW)], reps: 3, seed: 5 }, servers(13))).file.results;
    expect(ttfp.interval_95?.[0]).toBeGreaterThan(1);
    expect(ttfp.rank_test_p).toBe(0.1);
    expect(ttfp.verdict).toBe('no difference shown: the interval excludes 1 but the rank test gives p 0.1 (more repetitions would tell)');
  });

  it('leaves a run that missed its cadence out of the figures: it measured the client', async () => {
    const model = servers(15);
    let run = 0;
    // The third run fell behind its schedule, and its figure is ten times the server's.
    const { file } = await compare({ arms: [arm('A', FAST), arm('B', SLOW)], reps: 4, seed: 3 }, (args) => {
      const out = model(args);
      return ++run === 3 && !('error' in out) && out.duplex ? { qualified: false, duplex: { ttfp_ms: { p99: (out.duplex.ttfp_ms.p99 ?? 0) * 10 } } } : out;
    });
    const late = file.runs[2];
    expect(late).toMatchObject({ code: 3, qualified: false });
    const [ttfp] = file.results;
    expect(ttfp.per_arm[late.arm].n).toBe(3);
    expect(ttfp.per_arm[late.arm].max).toBeLessThan(late.values.ttfp_p99_ms ?? 0);
  });

  it('warns when the arms differ in more than one setting', async () => {
    const { file, stderr } = await compare({ arms: [arm('A', FAST), arm('B', CLOSED, 3)], reps: 2, seed: 1 }, servers(14));
    expect(stderr).toMatch(/warning: the arms differ in 2 settings \(--url, --concurrency\)/);
    expect(file.warnings).toEqual(['the arms differ in 2 settings (--url, --concurrency): a difference found cannot be put down to one of them']);
    // Nothing listens at B's URL: each of its runs failed to run, is said, and leaves no figure.
    expect(stderr).toContain('compare: repetition 1, arm B failed to run (error: cannot connect to ws://127.0.0.1:9/v1/realtime: connect ECONNREFUSED)\n');
    expect(file.runs.filter((r) => r.arm === 'B').map((r) => [r.code, r.qualified, r.values.ttfp_p99_ms])).toEqual([[1, false, null], [1, false, null]]);
    expect(file.results[0].verdict).toBe('too few qualified runs to compare');
  });
});

describe('runCompare, given files it cannot read', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compare-corrupt-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const arms = [arm('A', FAST), arm('B', SLOW)];
  const plan = (run: PointRunner): ComparePlan => ({ arms, reps: 2, seed: 1, metrics: ['ttfp_p99_ms'], output: dir, script: 'never started', run });
  const neverRun: PointRunner = () => Promise.reject(new Error('no run was due'));
  const failure = (p: Promise<unknown>) => p.then(() => new Error('it resolved'), (err: unknown) => err as Error);

  it('names a compare.json cut short, with the parser\'s place, and runs nothing', async () => {
    const path = join(dir, 'compare.json');
    await writeFile(path, '{"format":"duplex-bench.compare","arms":[{"label":"A"');
    const err = await failure(runCompare(plan(neverRun), memoryIo()));
    expect(err.message).toMatch(new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`));
  });

  it('names a compare.json of these arms whose runs are not a list, rather than failing on it', async () => {
    const path = join(dir, 'compare.json');
    await writeFile(path, JSON.stringify({ arms, reps: 2, seed: 1, runs: { A: 1 } }));
    const err = await failure(runCompare(plan(neverRun), memoryIo()));
    expect(err.message).toBe(`${path}: not a comparison to resume: its arms and reps are these, but "runs" is not a list of runs`);
  });

  it("names a run's summary.json cut short", async () => {
    const cut: PointRunner = async (args) => {
      const out = flag(args, '--output');
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'summary.json'), '{"qualified":tr');
      return { code: 0, error: null };
    };
    const err = await failure(runCompare(plan(cut), memoryIo()));
    expect(err.message).toMatch(new RegExp(`^${join(dir, 'rep1-[AB]', 'summary.json')}: not valid JSON \\(.+\\); the file may be cut short$`));
  });
});
