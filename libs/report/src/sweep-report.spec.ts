import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SweepFile, SweepPoint, SweepRun } from '@duplex-bench/experiments';
import { decidingOf, loadSweepReport, renderSweepHtml, type SweepReportData } from './sweep-report';

const TTFP = 'ttfp_p99_ms<=1000';
const UNDERRUNS = 'underruns=0';

/** A run of a point: its TTFP p99 and underruns against the two terms. */
function run(dir: string, ttfp: number | null, underruns = 0, qualified = true): SweepRun {
  return {
    dir,
    processes: 1,
    sessions_run: 0,
    code: 0,
    qualified,
    slo: [
      { term: TTFP, value: ttfp, ok: ttfp !== null && ttfp <= 1000 },
      { term: UNDERRUNS, value: underruns, ok: underruns === 0 },
    ],
  };
}

const settings: SweepFile['settings'] = { url: 'ws://127.0.0.1:9/v1', target: 'server', protocol: 'openai', duration_s: 30, runs: 2, slo: `${TTFP},${UNDERRUNS}`, run_args: '', processes: 1, max_processes: 1 };

/** A session-count sweep that tested 8, then 2, then 4 sessions (as bisection does): 2 and 4 pass, 8 fails. */
function countSweep(): SweepFile {
  const points: SweepPoint[] = [
    { sessions: 8, verdict: 'fail', runs: [run('/elsewhere/s8-r1', 1400, 2), run('/elsewhere/s8-r2', null, 0, false)] },
    { sessions: 2, verdict: 'pass', runs: [run('/elsewhere/s2-r1', 300), run('/elsewhere/s2-r2', 320)] },
    { sessions: 4, verdict: 'pass', runs: [run('/elsewhere/s4-r1', 600), run('', null)] },
  ];
  return {
    format: 'duplex-bench.sweep',
    version: 1,
    settings,
    points,
    capacity: { sessions: 4, range: [4, 8], limited_by: 'server', note: 'the last count that passed' },
    interrupted: false,
    resolution: 2,
    measurement_origin: { verdict: 'each count: every run qualified and every term met' },
  };
}

/** An arrival sweep of 1/s and 3/s; 3/s blocks 20% against a bound of 5%. */
function arrivalSweep(): SweepFile {
  const points: SweepPoint[] = [
    { rate_per_s: 3, offered_erlangs: 9, blocking_probability: { rate: 0.2, count: 50, ci95: [0.11, 0.33] }, verdict: 'fail', runs: [run('r3', 700)] },
    { rate_per_s: 1, offered_erlangs: 3, blocking_probability: { rate: 0, count: 20, ci95: [0, 0.16] }, verdict: 'pass', runs: [run('r1', 400)] },
  ];
  return {
    ...countSweep(),
    settings: { ...settings, runs: 1, arrivals: { max_blocking: 0.05, seed: 1 } },
    points,
    capacity: { sessions: null, range: [1, 3], limited_by: 'server', note: 'the last rate that passed', rate_per_s: 1, offered_erlangs: 3 },
    resolution: 0.5,
  };
}

describe('a sweep report', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-report-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const write = (file: SweepFile) => writeFile(join(dir, 'sweep.json'), JSON.stringify(file));

  it('is null for a directory without sweep.json', async () => {
    expect(await loadSweepReport(dir)).toBeNull();
  });

  it("names a sweep.json cut short, with the parser's place", async () => {
    await writeFile(join(dir, 'sweep.json'), JSON.stringify(countSweep()).slice(0, 120));
    const err = await loadSweepReport(dir).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${join(dir, 'sweep.json')}: not valid JSON \\(.+\\); the file may be cut short$`));
  });

  it('lays the counts out in load order, each with the place it had in the search', async () => {
    await write(countSweep());
    const d = (await loadSweepReport(dir)) as SweepReportData;
    expect(d).toMatchObject({ kind: 'sweep', title: `duplex-bench sweep: ${dir}`, axis: 'sessions', x: [2, 4, 8], loads: ['2', '4', '8'], order: [2, 3, 1], verdicts: ['pass', 'pass', 'fail'] });
    expect(d.qualified).toEqual(['2 of 2', '2 of 2', '1 of 2']);
    expect(d).toMatchObject({ capacity_x: 4, capacity_text: '4 sessions', blocking: null });
    expect(d.ended_early).toEqual([null, null, null]);
  });

  it('says which runs of a point ended early, on which term and when', async () => {
    const file = countSweep();
    file.points[0].runs[1] = { ...file.points[0].runs[1], code: 4, ended_early: { term: TTFP, at_s: 4.2 } };
    await write(file);
    const d = (await loadSweepReport(dir)) as SweepReportData;
    expect(d.ended_early).toEqual([null, null, 'run 2 at 4.2 s: TTFP p99 ≤ 1000 ms']);
  });

  it('gives each term its bound and, per count and run, its value and whether it held', async () => {
    await write(countSweep());
    const [ttfp, underruns] = ((await loadSweepReport(dir)) as SweepReportData).terms;
    expect(ttfp).toEqual({
      term: TTFP,
      label: 'TTFP p99 ≤ 1000 ms',
      bound: 1000,
      values: [
        [300, 320],
        [600, null],
        [1400, null],
      ],
      ok: [
        [true, true],
        [true, false],
        [false, false],
      ],
    });
    expect(underruns.bound).toBe(0);
    expect(underruns.values[2]).toEqual([2, 0]);
  });

  it('marks the knee between the last passing and the first failing count, and says what decided it', async () => {
    await write(countSweep());
    const d = (await loadSweepReport(dir)) as SweepReportData;
    expect(d.knee).toEqual({ pass_x: 4, fail_x: 8, pass: '4 sessions', fail: '8 sessions', resolution: '2 sessions' });
    expect(d.deciding).toBe('TTFP p99 ≤ 1000 ms (1400 / no such figure), playback underruns = 0 (2)');
  });

  it('has no knee when nothing failed, and a knee with no pass when the first count failed', async () => {
    const passing = countSweep();
    passing.capacity.range = [8, null];
    await write(passing);
    expect(await loadSweepReport(dir)).toMatchObject({ knee: null, deciding: null });
    const failing = countSweep();
    failing.capacity = { ...failing.capacity, sessions: null, range: [null, 2] };
    delete failing.resolution;
    await write(failing);
    expect(await loadSweepReport(dir)).toMatchObject({ knee: { pass_x: null, fail_x: 2, pass: 'none', fail: '2 sessions', resolution: '-' }, capacity_text: '- sessions' });
  });

  it("links a run's own page beside the sweep only when that page is there", async () => {
    await write(countSweep());
    await mkdir(join(dir, 's4-r1'));
    await writeFile(join(dir, 's4-r1', 'report.html'), '<!doctype html>');
    expect(((await loadSweepReport(dir)) as SweepReportData).links).toEqual([
      [null, null],
      ['s4-r1/report.html', null],
      [null, null],
    ]);
  });

  it('draws an arrival sweep against offered Erlangs, with each rate’s blocking and its bound', async () => {
    await write(arrivalSweep());
    const d = (await loadSweepReport(dir)) as SweepReportData;
    expect(d).toMatchObject({ axis: 'offered Erlangs', x: [3, 9], loads: ['1/s', '3/s'], order: [2, 1], capacity_x: 3, capacity_text: '1/s, 3 Erlangs offered' });
    expect(d.blocking).toEqual({
      max: 0.05,
      values: [
        { rate: 0, count: 20, ci95: [0, 0.16] },
        { rate: 0.2, count: 50, ci95: [0.11, 0.33] },
      ],
    });
    expect(d.knee).toEqual({ pass_x: 3, fail_x: 9, pass: '1/s', fail: '3/s', resolution: '0.5/s' });
    expect(d.deciding).toBe('blocking probability ≤ 0.05 (0.2)');
  });
});

describe('what decided a failing point', () => {
  const point = (runs: SweepRun[], rate?: number | null): SweepPoint => ({ sessions: 8, verdict: 'fail', runs, blocking_probability: rate === undefined ? undefined : { rate, count: 10, ci95: null } });

  it('names each missed term once, with the value of every run that missed it', () => {
    expect(decidingOf(point([run('a', 1200), run('b', 900), run('c', 1500, 1)]))).toBe('TTFP p99 ≤ 1000 ms (1200 / 1500), playback underruns = 0 (1)');
  });

  it('puts blocking first, only when it is over the bound', () => {
    expect(decidingOf(point([run('a', 1200)], 0.1), 0.05)).toBe('blocking probability ≤ 0.05 (0.1), TTFP p99 ≤ 1000 ms (1200)');
    expect(decidingOf(point([run('a', 1200)], 0.05), 0.05)).toBe('TTFP p99 ≤ 1000 ms (1200)');
    expect(decidingOf(point([run('a', 1200)], null), 0.05)).toBe('TTFP p99 ≤ 1000 ms (1200)');
    expect(decidingOf(point([run('a', 1200)], 0.1))).toBe('TTFP p99 ≤ 1000 ms (1200)');
  });

  it('names first the term a run ended early on, and when', () => {
    const early = { ...run('a', null), code: 4, ended_early: { term: TTFP, at_s: 4.2 } };
    expect(decidingOf(point([early, run('b', 1200)]))).toBe('TTFP p99 ≤ 1000 ms (ended the run at 4.2 s), TTFP p99 ≤ 1000 ms (no such figure / 1200)');
  });

  it('says so when no run recorded a missed term', () => {
    expect(decidingOf(point([run('a', 100)]))).toBe('no term recorded as missed');
  });
});

describe("the sweep's page", () => {
  function data(over: Partial<SweepReportData> = {}): SweepReportData {
    return {
      kind: 'sweep',
      title: 'duplex-bench sweep: /s',
      capacity: countSweep().capacity,
      settings,
      axis: 'sessions',
      x: [],
      capacity_x: 4,
      capacity_text: '4 sessions',
      loads: [],
      blocking: null,
      verdicts: [],
      qualified: [],
      ended_early: [],
      order: [],
      links: [],
      knee: null,
      deciding: null,
      terms: [],
      behaviour: [],
      gauges: [],
      origin: { verdict: 'every run qualified & every term met' },
      ...over,
    };
  }
  const verdict = (html: string) => /<div class="verdict (\w+)" id="verdict">(.*?)<\/div>\n/.exec(html)?.slice(1);

  it('states the capacity and its limit, ok when the server (or the search range) was the limit', () => {
    expect(verdict(renderSweepHtml(data()))).toEqual(['ok', 'capacity: 4 sessions (server: the last count that passed)']);
    const range = data({ capacity: { ...countSweep().capacity, limited_by: 'search range' } });
    expect(verdict(renderSweepHtml(range))?.[0]).toBe('ok');
    const client = data({ capacity: { ...countSweep().capacity, limited_by: 'client', note: 'late packets <at 8>' } });
    expect(verdict(renderSweepHtml(client))).toEqual(['bad', 'capacity: 4 sessions (client: late packets &lt;at 8&gt;)']);
  });

  it('says what decided the first failing point, inside the verdict', () => {
    const html = renderSweepHtml(data({ deciding: 'TTFP p99 ≤ 1000 ms (1400)', knee: { pass_x: 4, fail_x: 8, pass: '4 sessions', fail: '8 sessions', resolution: '2 sessions' } }));
    expect(html).toContain('<div class="sub" id="deciding">decided by: TTFP p99 ≤ 1000 ms (1400) at 8 sessions</div></div>');
    expect(renderSweepHtml(data())).not.toContain('id="deciding"');
  });

  it('describes a count sweep by its runs per count, and its run flags only when it had some', () => {
    const html = renderSweepHtml(data());
    expect(html).toContain('2 run(s) of 30 s per count; SLO <code>ttfp_p99_ms&lt;=1000,underruns=0</code></p>');
    expect(html).toContain('<h2>Counts tested</h2>');
    expect(html).toContain('<p class="origin">every run qualified &amp; every term met</p>');
    expect(renderSweepHtml(data({ settings: { ...settings, run_args: '--packet-ms 20' } }))).toContain('; run flags <code>--packet-ms 20</code></p>');
  });

  it('describes an arrival sweep by its rates and the blocking each may have', () => {
    const html = renderSweepHtml(data({ settings: { ...settings, arrivals: { max_blocking: 0.01, seed: 7 } } }));
    expect(html).toContain('2 run(s) per rate, blocking at most 0.01;');
    expect(html).toContain('<h2>Rates tested</h2>');
  });
});
