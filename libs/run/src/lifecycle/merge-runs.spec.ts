import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '@duplex-bench/cli';
// eslint-disable-next-line @nx/enforce-module-boundaries -- a spec loads the HTTP engine up front; the lib loads it lazily, so that the realtime commands never do
import { httpSummary, LatencyHistograms, PerSecond, type HttpSummary } from '@duplex-bench/http-load';
import { createUsHistogram } from '@duplex-bench/metrics';
import { runFile } from '@duplex-bench/results';
import type { RunVerdict } from '../verdict';
import { mergedVideo, mergeRuns, type MergeOptions, type RenderMerge } from './merge-runs';

/** What `httpSummary` takes of the requests that ended (RequestTally, whose class is not on http-load's face): every one completed. */
type Tally = Parameters<typeof httpSummary>[0]['tally'];

/** One process's summary of `n` closed-loop requests, each `ttft_ms` to its first token and 100 ms more to its end; `late` sends past the bound. */
function part(n: number, concurrency: number, ttft_ms = 100, late = 0): HttpSummary {
  const histograms = new LatencyHistograms(false);
  const timeline = new PerSecond(0);
  for (let i = 0; i < n; i++) {
    histograms.record('ttft', ttft_ms, true);
    histograms.record('e2e', ttft_ms + 100, true);
    timeline.add('offered', i * 0.1);
    timeline.add('completed', i * 0.1 + 0.2);
  }
  const tally: Tally = {
    ended: n,
    sent: n,
    completed: n,
    steady: n,
    errors: {},
    statuses: { 200: n },
    last_end_s: (n - 1) * 0.1 + 0.2,
    tokens: 10 * n,
    steady_tokens: 10 * n,
    origins: new Set(['usage']),
    by_origin: { usage: n },
    prompt_sum: 0,
    prompts: 0,
    add: () => undefined,
  };
  return httpSummary({
    tally,
    histograms,
    send_lag: createUsHistogram(),
    late_sends: late,
    max_send_lag_ms: 10,
    origin_s: 0,
    steady_from_s: 0,
    warmup_s: 0,
    load: { mode: 'closed', concurrency, endpoint: 'chat', stream: true, max_tokens: 16, prompts: 'synthetic', seed: 1 },
    interrupted: false,
    sse_events: 12 * n,
    loop: { p50: 1, p99: 2, max: 3, over_80ms: 0, samples: 10 },
    cpu: { user: 0.1, system: 0.05, total: 0.15, cpu_s: 0.3, wall_s: 2 },
    peak_rss_bytes: 100 * 2 ** 20,
    rss: { now_mib: 100, peak_mib: 100, growth_mib_per_min: null, late_growth_mib_per_min: null, late_from_s: null, samples: 0, span_s: 0, from_s: 0, until_s: null },
    timeline: timeline.done(),
  });
}

describe('mergeRuns', () => {
  let dir: string;
  let out: string[];
  let emitted: unknown[];
  let rendered: Array<{ summary: HttpSummary; output: string; v: RunVerdict }>;
  const io = () => ({ stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => out.push(`stderr: ${s}`) }, emit: (s: unknown) => emitted.push(s) });
  const render: RenderMerge = {
    merged: () => {
      throw new Error('http runs were rendered as realtime runs');
    },
    http: (summary, output, v) => {
      rendered.push({ summary, output, v });
      return `merged ${summary.requests.sent}`;
    },
  };
  const flags = (): MergeOptions => ({ output: join(dir, 'merged'), max_clock_uncertainty_ms: 5, timeline: 'auto' });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'merge-runs-'));
    out = [];
    emitted = [];
    rendered = [];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** A run directory `name` under the temp folder holding `summary` (or, without one, the samples file of a realtime run). */
  async function runDir(name: string, summary?: HttpSummary): Promise<string> {
    const d = join(dir, name);
    await mkdir(d, { recursive: true });
    if (summary) await writeFile(runFile(d, 'summary'), JSON.stringify(summary));
    else await writeFile(runFile(d, 'samples'), '');
    return d;
  }

  async function refusal(given: string[]): Promise<string> {
    const error = await mergeRuns(given, flags(), io(), render).then(
      (code) => new Error(`merged, exit status ${code}`),
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect(out).toEqual([]);
    return (error as Error).message;
  }

  it('refuses no directory, a directory that is none, and a folder with no runs in it, naming it', async () => {
    expect(await refusal([])).toBe('probe merge needs at least one run directory');
    expect(await refusal([join(dir, 'missing')])).toBe(`${join(dir, 'missing')}: no such directory`);
    await mkdir(join(dir, 'empty', 'notes'), { recursive: true });
    expect(await refusal([join(dir, 'empty')])).toBe(`${join(dir, 'empty')} has no samples.msgpack or summary.json and no p*/ or shard-*/ run directories`);
  });

  it('refuses http runs beside realtime runs, in either order, before writing anything', async () => {
    const http = await runDir('http', part(3, 1));
    const realtime = await runDir('realtime');
    const mixed = 'probe merge takes runs of one kind: these mix http runs with realtime runs';
    expect(await refusal([http, realtime])).toBe(mixed);
    expect(await refusal([realtime, http])).toBe(mixed);
    await expect(readFile(runFile(flags().output, 'summary'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('merges http runs: counts added, histograms pooled, summary.json under --output with its verdict; exit 0', async () => {
    const a = await runDir('p0', part(4, 2, 100));
    const b = await runDir('p1', part(6, 3, 300));
    expect(await mergeRuns([a, b], flags(), io(), render)).toBe(0);
    const written = JSON.parse(await readFile(runFile(flags().output, 'summary'), 'utf8')) as HttpSummary & { processes: number; verdict: string };
    expect(written).toMatchObject({ kind: 'http', processes: 2, verdict: 'qualified', requests: { sent: 10, completed: 10, failed: 0, statuses: { 200: 10 } }, load: { mode: 'closed', concurrency: 5 } });
    expect(written.tokens).toMatchObject({ output: 100, by_origin: { usage: 10 } });
    // Pooled, not averaged: the median is the larger part's, the mean over every request (to the histograms' 3 digits).
    expect(written.latency_ms.ttft.raw).toMatchObject({ count: 10, p50: expect.closeTo(300, 0), mean: expect.closeTo(220, 0) });
    expect(written.latency_ms.e2e.raw).toMatchObject({ count: 10, max: expect.closeTo(400, 0) });
    // What is rendered and emitted is what was written.
    expect(rendered).toHaveLength(1);
    expect(rendered[0]).toMatchObject({ output: flags().output, v: { verdict: 'qualified' }, summary: { requests: written.requests } });
    expect(out).toEqual(['merged 10\n']);
    expect(emitted).toEqual([written]);
  });

  it('takes the p*/ folders of a launched run for its runs, and a part that fell behind makes the merge unqualified: exit 3', async () => {
    await runDir(join('launched', 'p0'), part(4, 2));
    await runDir(join('launched', 'p1'), part(4, 2, 100, 1));
    expect(await mergeRuns([join(dir, 'launched')], flags(), io(), render)).toBe(3);
    const written = JSON.parse(await readFile(runFile(flags().output, 'summary'), 'utf8')) as HttpSummary & { verdict: string };
    expect(written).toMatchObject({ verdict: 'unqualified', qualified: false, requests: { sent: 8 } });
    expect(written.unqualified_reason).toMatch(/^process 1: 1 request\(s\) started more than 10 ms after their intended time/);
  });
});

describe('mergedVideo', () => {
  it("sums the parts' camera frames and bytes (and deleted image items where counted); none when no part sent any", () => {
    const part = (frames_sent: number, frame_bytes: number, image_items_deleted?: number) => ({ source: '/frames', frames_sent, frame_bytes, ...(image_items_deleted !== undefined ? { image_items_deleted } : {}), measurement_origin: {} });
    expect(mergedVideo([part(3, 300), undefined, part(4, 400)])).toMatchObject({ source: '/frames', frames_sent: 7, frame_bytes: 700 });
    expect(mergedVideo([part(3, 300)])).not.toHaveProperty('image_items_deleted');
    expect(mergedVideo([part(10, 1, 2), part(10, 1, 3)])?.image_items_deleted).toBe(5);
    expect(mergedVideo([undefined, undefined])).toBeNull();
  });
});
