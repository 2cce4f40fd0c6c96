import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUsHistogram, RssMonitor } from '@duplex-bench/metrics';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import { RUN_FILES } from '@duplex-bench/results';
import { httpSummary, LatencyHistograms, PerSecond, RequestTally, type HttpSummary } from './http-summary';
import { childSummaries, launchHttpProcesses, shares, type HttpLaunchOptions } from './launch';
import { newRecord } from './request-record';

describe('shares', () => {
  it('splits a total into whole shares that add up to it, the first ones one larger', () => {
    expect(shares(10, 3)).toEqual([4, 3, 3]);
    expect(shares(11, 3)).toEqual([4, 4, 3]);
    expect(shares(2, 4)).toEqual([1, 1, 0, 0]);
    expect(shares(8, 2)).toEqual([4, 4]);
    for (const [total, parts] of [
      [1000, 7],
      [5, 5],
      [0, 3],
    ]) {
      const s = shares(total, parts);
      expect(s.reduce((a, b) => a + b, 0)).toBe(total);
      expect(Math.max(...s) - Math.min(...s)).toBeLessThanOrEqual(1);
    }
  });
});

/** One process's summary of `n` completed requests. */
function part(n: number, load: HttpSummary['load']): HttpSummary {
  const tally = new RequestTally();
  const histograms = new LatencyHistograms(false, load.mode === 'open' && load.max_concurrency !== undefined);
  const per = new PerSecond(0);
  for (let i = 0; i < n; i++) {
    const r = { ...newRecord(i, i * 0.1), dispatched_s: i * 0.1, started_s: i * 0.1, first_token_s: i * 0.1 + 0.1, last_token_s: i * 0.1 + 0.2, end_s: i * 0.1 + 0.2, tokens: 5, tokens_origin: 'usage' as const, chunks: 5 };
    tally.add(r, 0);
    histograms.recordRequest(r, true);
    per.add('offered', r.intended_s);
  }
  return httpSummary({
    tally,
    histograms,
    send_lag: createUsHistogram(),
    late_sends: 0,
    max_send_lag_ms: 10,
    origin_s: 0,
    steady_from_s: 0,
    warmup_s: 0,
    load,
    interrupted: false,
    sse_events: n * 6,
    loop: { p50: 1, p99: 2, max: 3, over_80ms: 0, samples: 10 },
    cpu: { user: 0.1, system: 0.05, total: 0.15, cpu_s: 1, wall_s: 10 },
    peak_rss_bytes: 1 << 27,
    // No sample taken: the figures of a monitor never started.
    rss: new RssMonitor(0, 1000, new ManualTimers()).figures(),
    timeline: per.done(),
  });
}

/**
 * A stand-in for `http` in a launched child: it writes what it was given, then, as its plan says,
 * reports ready and leaves the summary it is handed (`summary`), dies after the gate (`die`), or fails before it (`fail`).
 */
const CHILD = (ipc: string) => `
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LauncherLink } from ${JSON.stringify(ipc)};
const here = dirname(process.argv[1]);
const argv = process.argv.slice(2);
const out = argv[argv.indexOf('--output') + 1];
const index = Number(process.env.DUPLEX_BENCH_CHILD_INDEX);
const plan: string = JSON.parse(readFileSync(join(here, 'plan.json'), 'utf8'))[index];
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'seen.json'), JSON.stringify({ argv, key: process.env.OPENAI_API_KEY ?? null }));
const link = new LauncherLink();
if (plan === 'fail') {
  process.stderr.write('error: no server at the URL\\n');
  link.failed('no server at the URL');
  process.exitCode = 1;
  link.done(1);
} else {
  void link.ready(0, 0).then(() => {
    if (plan === 'die') {
      process.stderr.write('error: lost the server\\n');
      process.exit(1);
    }
    copyFileSync(join(here, 'summary-' + index + '.json'), join(out, ${JSON.stringify(RUN_FILES.summary)}));
    link.done(0);
  });
}
`;

describe('launchHttpProcesses', () => {
  // These start real Node processes through tsx (1.5 s alone): more than jest's 5 s with the other suites beside them.
  jest.setTimeout(20_000);
  let dir: string;
  // The children inherit this environment: a key set in it would hide where theirs comes from.
  const key = process.env.OPENAI_API_KEY;
  beforeAll(() => delete process.env.OPENAI_API_KEY);
  afterAll(() => {
    if (key !== undefined) process.env.OPENAI_API_KEY = key;
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'http-launch-'));
    await writeFile(join(dir, 'child.ts'), CHILD(join(__dirname, '..', '..', 'launcher', 'src', 'ipc.ts')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** Launches children that follow `plan`, child i leaving `summaries[i]`; what each was given, and what it said on stderr. */
  async function launch(plan: string[], summaries: HttpSummary[], over: Partial<HttpLaunchOptions>) {
    await writeFile(join(dir, 'plan.json'), JSON.stringify(plan));
    for (const [i, s] of summaries.entries()) await writeFile(join(dir, `summary-${i}.json`), JSON.stringify(s));
    const stderr: Array<[number, string]> = [];
    let interrupt: (() => void) | null = null;
    const output = join(dir, 'out');
    const outcome = await launchHttpProcesses(
      {
        module: join(dir, 'child.ts'),
        processes: plan.length,
        argv: [],
        output,
        model: 'm1',
        seed: 7,
        request_timeout_s: 30,
        start_timeout_s: 60,
        onStderr: (i, line) => stderr.push([i, line]),
        ...over,
      },
      (stop) => (interrupt = stop),
    );
    const seen = async (i: number) => JSON.parse(await readFile(join(output, `p${i}`, 'seen.json'), 'utf8')) as { argv: string[]; key: string | null };
    return { ...outcome, stderr, seen, interruptible: interrupt !== null, output };
  }

  const open = (rate: number, cap: number): HttpSummary['load'] => ({ mode: 'open', rate_rps: rate, arrivals: 'constant', max_concurrency: cap, endpoint: 'chat', stream: true, max_tokens: 8, prompts: 'p', seed: 7 });

  it("gives each child its share of the rate, requests and places, its own seed, output and metrics port, the key only in its environment; pools the summaries and names the child that left none", async () => {
    const argv = ['--url', 'http://h/v1', '--rate', '30', '--requests=10', '--api-key', 'sk-x', '--processes', '3', '--model', 'other', '--metrics-port', '9100', '--vllm-result', 'v.json', '--max-tokens', '8', '--max-concurrency', '5', '--seed', '1', '--output', 'o'];
    const r = await launch(['summary', 'summary', 'die'], [part(4, open(10, 2)), part(3, open(10, 2))], { argv, rate: 30, requests: 10, max_concurrency: 5, api_key: 'sk-x', metrics_port: 9100, metrics_linger_s: 0 });
    expect(r.interruptible).toBe(true);
    expect(r.result.start_failure).toBeNull();
    for (const [i, requests, cap] of [
      [0, 4, 2],
      [1, 3, 2],
      [2, 3, 1],
    ]) {
      const seen = await r.seen(i);
      expect(seen.key).toBe('sk-x');
      expect(seen.argv).toEqual([
        'http',
        '--url',
        'http://h/v1',
        '--max-tokens',
        '8',
        '--rate',
        '10',
        '--requests',
        String(requests),
        '--max-concurrency',
        String(cap),
        '--seed',
        String(7 + i),
        '--model',
        'm1',
        '--output',
        join(r.output, `p${i}`),
        '--quiet',
        '--metrics-port',
        String(9100 + i),
      ]);
    }
    // Two summaries pooled; the third child died after the gate and is named, so the pooled run is unqualified.
    expect(r.died).toEqual(['process 2 died mid-run (1): lost the server']);
    expect(r.summary).toMatchObject({ processes: 2, qualified: false, unqualified_reason: 'process 2 died mid-run (1): lost the server', requests: { completed: 7 } });
    expect(r.summary?.load).toMatchObject({ mode: 'open', rate_rps: 20, max_concurrency: 4 });
    expect(r.stderr).toContainEqual([2, 'error: lost the server']);
  });

  it('closed loop: the lanes split between the children, every child asking for a free metrics port, the key nowhere without one', async () => {
    const closed: HttpSummary['load'] = { mode: 'closed', concurrency: 3, endpoint: 'chat', stream: true, max_tokens: 8, prompts: 'p', seed: 7 };
    const r = await launch(['summary', 'summary'], [part(2, closed), part(2, { ...closed, concurrency: 2 })], { concurrency: 5, duration_s: 5, metrics_port: 0 });
    const seen = [await r.seen(0), await r.seen(1)];
    expect(seen.map((s) => s.argv.slice(0, 3))).toEqual([
      ['http', '--concurrency', '3'],
      ['http', '--concurrency', '2'],
    ]);
    expect(seen.map((s) => s.argv.slice(-2))).toEqual([
      ['--metrics-port', '0'],
      ['--metrics-port', '0'],
    ]);
    expect(seen.map((s) => s.argv.includes('--requests'))).toEqual([false, false]);
    expect(seen.map((s) => s.key)).toEqual([null, null]);
    expect(r.died).toEqual([]);
    expect(r.summary).toMatchObject({ processes: 2, qualified: true, load: { mode: 'closed', concurrency: 5 } });
  });

  it('a child that fails before the gate ends the launch: no summary, and the reason is the launcher\'s', async () => {
    const r = await launch(['fail'], [], { rate: 5, requests: 5 });
    expect(r.result.start_failure).toEqual({ index: 0, reason: 'failed before the start gate: no server at the URL' });
    expect(r.summary).toBeNull();
    expect(r.died).toEqual([]);
  });
});

describe('childSummaries', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'http-children-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("pools the summaries the children wrote; one that left none, or one cut short, is a died line naming why", async () => {
    for (const [i, text] of ['{"kind":"http"}', '{"kind":"ht', null, '{"kind":"http"}'].entries()) {
      await mkdir(join(dir, `p${i}`));
      if (text !== null) await writeFile(join(dir, `p${i}`, 'summary.json'), text);
    }
    const { parts, died } = await childSummaries(dir, [0, 1, 2, 3].map((index) => ({ index, failure: index === 3 ? 'exited 1' : null })));
    expect(parts).toEqual([{ kind: 'http' }, { kind: 'http' }]);
    expect(died).toEqual([expect.stringMatching(new RegExp(`^process 1 left a summary that does not read: ${join(dir, 'p1', 'summary.json')}: not valid JSON \\(.+\\); the file may be cut short$`)), 'process 2 left no summary']);
  });
});
