import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunningProcess } from '@duplex-bench/launcher';
import { blockingProbability, judgedLive, readJsonFile, RunFileError, runFile, type ArrivalRate, type RunSummary } from '@duplex-bench/results';
import type { ExperimentIo } from './experiment-io';
import { scriptRunner, type PointRunner } from './point-runner';
import { checkSlo, sloFigure, type SloCheck, type SloTerm } from './slo';

/** How one load fared: `client-limited` when the client missed its cadence in any run (never the server's limit). */
export type PointVerdict = 'pass' | 'fail' | 'client-limited' | 'failed-to-run';

export interface SweepRun {
  dir: string;
  /** Probe processes of this run (its sessions split evenly over them). */
  processes: number;
  /** Sessions the run streamed: the count, rounded up to a whole number per process. */
  sessions_run: number;
  code: number | null;
  /** The last `error:` line the run wrote, when it wrote one: why a run failed to run. */
  error?: string;
  qualified: boolean;
  slo: SloCheck[];
  /** The run ended early on an SLO term it could no longer meet (`run --abort-on-fail`): which, and when (s after its start gate). */
  ended_early?: { term: string; at_s: number };
  /** `--server-gauge`: each gauge's mean and max over the run, from its summary's server_metrics block. */
  server_gauges?: Record<string, { mean: number; max: number }>;
  /** Arrival sweeps: the run's own arrivals figures (its steady ones after --warmup-s). */
  arrivals?: SweepRunArrivals;
}

/** One arrival run as the sweep judged it, read from its summary's `arrivals` block. */
export interface SweepRunArrivals {
  offered_erlangs: number;
  /** Arrivals not skipped by the client, and how many of them the server refused. */
  count: number;
  blocked: number;
  client_skipped: number;
  /** `steady` when the run had --warmup-s (arrivals after it only), else `all`. */
  over: 'steady' | 'all';
  blocking_probability: ArrivalRate;
}

export interface SweepPoint {
  /** Session-count sweeps: the count tested. */
  sessions?: number;
  /** Arrival sweeps: the offered rate tested, sessions per second. */
  rate_per_s?: number;
  /** Arrival sweeps: the offered load of the point's runs (rate x stated mean duration), Erlangs. */
  offered_erlangs?: number | null;
  /** Arrival sweeps: blocked / arrivals pooled over the point's runs, with its 95% Wilson interval; the pass rule reads `rate`. */
  blocking_probability?: ArrivalRate | null;
  runs: SweepRun[];
  verdict: PointVerdict;
  /** With --processes auto: the process counts at which this count was client-limited before the runs kept. */
  client_limited_at_processes?: number[];
}

export interface SweepSettings {
  url: string;
  target: 'server' | 'client';
  protocol: string;
  duration_s: number;
  runs: number;
  slo: string;
  run_args: string;
  /** Probe processes per run: a number, or `auto` (from 1, doubled up to `max_processes` while the client is the limit). */
  processes: number | 'auto';
  max_processes: number;
  /** Arrival sweeps (`--arrival-rate MIN:MAX`): the blocking a passing rate may have, and the seed of its first run (run r gets seed + r - 1). */
  arrivals?: { max_blocking: number; seed: number };
  /** Each one-process run ends as soon as a term it can judge live can no longer pass (`run --abort-on-fail`); absent with `--run-to-end`. */
  abort_on_fail?: { grace_s: number };
  /** `--server-metrics URL --server-gauge NAME…`: every run scrapes the server and keeps these gauges. */
  server?: { metrics_url: string; gauges: string[] };
  /** `--gpus N`: what the server runs on, for the capacity per GPU. */
  gpus?: number;
}

/** The load a point tested: its rate in an arrival sweep, else its session count. */
export function loadOf(p: SweepPoint): number {
  return p.rate_per_s ?? p.sessions ?? 0;
}

export interface SweepFile {
  format: 'duplex-bench.sweep';
  version: 1;
  settings: SweepSettings;
  points: SweepPoint[];
  /** `sessions` and `range` are session counts; in an arrival sweep, `sessions` is null and `range`, `rate_per_s` are rates (sessions/s). */
  capacity: {
    sessions: number | null;
    range: [number | null, number | null];
    limited_by: 'server' | 'client' | 'search range' | null;
    note: string;
    rate_per_s?: number | null;
    offered_erlangs?: number | null;
    /** `--server-gauge`: the capacity point's gauges (the largest max and the mean of the means over its runs). */
    server_gauges?: Record<string, { mean: number; max: number }>;
    /** `--gpus N`: the capacity per GPU of the server, with the range it lies in (count sweeps: sessions; arrival sweeps: offered Erlangs). */
    per_gpu?: { gpus: number; sessions?: number | null; sessions_range?: [number | null, number | null]; erlangs?: number | null; erlangs_range?: [number | null, number | null] };
  };
  interrupted: boolean;
  /** Bisection stopped when the last pass and the first fail were this close (sessions, or sessions/s). */
  resolution?: number;
  measurement_origin: Record<string, string>;
}

/** What a sweep searches: counts (or, in an arrival sweep, rates) from `min` to `max`, bisected down to `resolution`; each run is `script run …`. */
export interface SweepPlan {
  settings: SweepSettings;
  terms: SloTerm[];
  min: number;
  max: number;
  resolution: number;
  output: string;
  /** The duplex-bench executable each run starts as a fresh process. */
  script: string;
  /** The URL the runs connect to, when it is not `settings.url` (the built-in mock's port, which a resume does not keep). */
  url?: string;
  /** Runs one run of a point (`run …` args): by default `script` as a fresh process; a spec gives a fake. */
  run?: PointRunner;
  /**
   * After each run, before the next: its own page (`report`), written by the caller. A failure is
   * said and never changes the point's verdict; it runs between runs, so it never loads one.
   */
  afterRun?(dir: string): Promise<unknown>;
}

/** Blocked over arrivals, pooled over the runs of a point (their steady figures when they have them). */
export function pooledBlocking(runs: SweepRun[]): ArrivalRate | null {
  const a = runs.map((r) => r.arrivals).filter((x): x is SweepRunArrivals => x !== undefined);
  if (a.length === 0) return null;
  const blocked = a.reduce((n, x) => n + x.blocked, 0);
  const count = a.reduce((n, x) => n + x.count, 0);
  return blockingProbability({ arrived: count, client_skipped: 0, started: count - blocked, blocked, failed_to_open: 0 });
}

function verdictOf(runs: SweepRun[], target: 'server' | 'client', maxBlocking?: number): PointVerdict {
  // 4: a run that judged its own SLO (--abort-on-fail) and failed it; the sweep judges the terms itself.
  if (runs.some((r) => r.code !== 0 && r.code !== 3 && r.code !== 4)) return 'failed-to-run';
  // Sweeping the client, its cadence is the thing measured: a late packet fails the count.
  if (target === 'client') return runs.every((r) => r.qualified) ? 'pass' : 'fail';
  if (runs.some((r) => !r.qualified)) return 'client-limited';
  if (maxBlocking !== undefined) {
    // An arrival the client skipped (--max-in-flight) was never offered to the server: the client is the limit.
    if (runs.some((r) => !r.arrivals || r.arrivals.client_skipped > 0)) return runs.some((r) => !r.arrivals) ? 'failed-to-run' : 'client-limited';
    // The point estimate decides, as an operator's "at most 1% refused" reads; its interval is recorded beside it.
    const b = pooledBlocking(runs);
    if (b?.rate === null || b === null || b.rate > maxBlocking) return 'fail';
  }
  return runs.every((r) => !r.ended_early && r.slo.every((c) => c.ok)) ? 'pass' : 'fail';
}

/**
 * The capacity per GPU (`--gpus N`): a count sweep's sessions, and the range it lies in ([last pass,
 * first failure]), over N; an arrival sweep's offered Erlangs at the last passing rate, and at the
 * first failing one, over N.
 */
export function perGpu(c: SweepFile['capacity'], points: SweepPoint[], gpus: number): NonNullable<SweepFile['capacity']['per_gpu']> {
  const per = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round((x / gpus) * 1000) / 1000);
  if (c.rate_per_s === undefined) return { gpus, sessions: per(c.sessions), sessions_range: [per(c.range[0]), per(c.range[1])] };
  const erlangsAt = (rate: number | null) => (rate === null ? null : (points.find((p) => p.rate_per_s === rate)?.offered_erlangs ?? null));
  return { gpus, erlangs: per(c.offered_erlangs), erlangs_range: [per(erlangsAt(c.range[0])), per(erlangsAt(c.range[1]))] };
}

/** A run's `--server-gauge` figures as the sweep keeps them: mean and max of each. */
function gaugesOf(summary: RunSummary | null): Pick<SweepRun, 'server_gauges'> {
  const g = summary?.server_metrics?.gauges;
  if (!g || Object.keys(g).length === 0) return {};
  return { server_gauges: Object.fromEntries(Object.entries(g).map(([name, f]) => [name, { mean: f.mean, max: f.max }])) };
}

/** The gauges of a point's runs pooled: the largest max, the mean of the means. */
export function pointGauges(p: SweepPoint | undefined): Record<string, { mean: number; max: number }> | null {
  const runs = (p?.runs ?? []).filter((r) => r.server_gauges);
  if (runs.length === 0) return null;
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.server_gauges ?? {})))];
  return Object.fromEntries(
    names.map((name) => {
      const each = runs.map((r) => r.server_gauges?.[name]).filter((x): x is { mean: number; max: number } => x !== undefined);
      return [name, { mean: Math.round((each.reduce((a, x) => a + x.mean, 0) / each.length) * 1000) / 1000, max: Math.max(...each.map((x) => x.max)) }];
    }),
  );
}

/** A run's arrivals figures as the sweep judges them: the steady ones when the run had a warm-up. */
function runArrivals(summary: RunSummary | null): SweepRunArrivals | undefined {
  const a = summary?.arrivals;
  if (!a) return undefined;
  const c = a.steady ?? a;
  return { offered_erlangs: a.offered_erlangs, count: c.arrived - c.client_skipped, blocked: c.blocked, client_skipped: a.client_skipped, over: a.steady ? 'steady' : 'all', blocking_probability: c.blocking_probability };
}

/** ", with N processes" when the point's runs used more than one. */
function limitedProcesses(points: SweepPoint[], sessions: number): string {
  const p = Math.max(1, ...(points.find((x) => loadOf(x) === sessions)?.runs.map((r) => r.processes ?? 1) ?? [1]));
  return p > 1 ? ` with ${p} processes` : '';
}

/** The capacity the points show: the largest passing load below the smallest failing one; an arrival sweep's as a rate with its offered Erlangs. */
export function capacityOf(points: SweepPoint[], min: number, max: number, target: 'server' | 'client' = 'server'): SweepFile['capacity'] {
  const arrival = points.some((p) => p.rate_per_s !== undefined);
  const c = capacityOfLoads(points, min, max, target, arrival ? '/s' : ' sessions');
  if (!arrival) return c;
  const at = points.find((p) => p.rate_per_s === c.sessions);
  return { ...c, sessions: null, rate_per_s: c.sessions, offered_erlangs: at?.offered_erlangs ?? null };
}

function capacityOfLoads(points: SweepPoint[], min: number, max: number, target: 'server' | 'client', unit: string): SweepFile['capacity'] {
  const passing = points.filter((p) => p.verdict === 'pass').map(loadOf);
  const failing = points.filter((p) => p.verdict === 'fail').map(loadOf);
  const limited = points.filter((p) => p.verdict === 'client-limited' || p.verdict === 'failed-to-run').map(loadOf);
  const firstFail = failing.length ? Math.min(...failing) : null;
  const firstLimited = limited.length ? Math.min(...limited) : null;
  const below = (n: number) => (firstFail === null || n < firstFail) && (firstLimited === null || n < firstLimited);
  const lastPass = passing.filter(below).length ? Math.max(...passing.filter(below)) : null;
  if (firstLimited !== null && (firstFail === null || firstLimited < firstFail)) {
    return {
      sessions: lastPass,
      range: [lastPass, null],
      limited_by: 'client',
      note: `the client missed its cadence (or a run failed) at ${firstLimited}${unit}${limitedProcesses(points, firstLimited)}: the server held ${lastPass ?? 'no tested count'}, and its limit was not reached; spread the load over more processes (--processes auto) or hosts`,
    };
  }
  if (firstFail === null) return { sessions: lastPass, range: [lastPass, null], limited_by: 'search range', note: `every ${unit === '/s' ? 'rate' : 'count'} up to ${max}${unit === '/s' ? unit : ''} passed: the capacity is at least ${lastPass}` };
  const by = target === 'client' ? 'client' : 'server';
  const what = target === 'client' ? 'the probe kept its cadence' : 'passes';
  if (lastPass === null) return { sessions: null, range: [null, firstFail], limited_by: by, note: `the smallest ${unit === '/s' ? 'rate' : 'count'}, ${min}${unit === '/s' ? unit : ''}, already failed` };
  return { sessions: lastPass, range: [lastPass, firstFail], limited_by: by, note: `${what} at ${lastPass}${unit === '/s' ? unit : ''}, ${target === 'client' ? 'not' : 'fails'} at ${firstFail}${unit === '/s' ? unit : ''}` };
}

/**
 * Runs the sweep: up by doubling while counts pass, then bisecting between the last pass and the
 * first failure. Every count is `settings.runs` fresh `run` processes; sweep.json in `output` is
 * rewritten after each count, and a sweep with the same settings there resumes from it.
 */
export async function runSweep(plan: SweepPlan, io: ExperimentIo): Promise<SweepFile> {
  const { settings, terms, min, max, output } = plan;
  await mkdir(output, { recursive: true });
  const path = runFile(output, 'sweep');
  const earlier = await readJsonFile<SweepFile>(path);
  const same = earlier && JSON.stringify(earlier.settings) === JSON.stringify(settings);
  if (same && !(Array.isArray(earlier.points) && earlier.points.every((p) => Array.isArray(p?.runs)))) {
    throw new RunFileError(path, 'not a sweep to resume: its settings are these, but "points" is not a list of points with their runs');
  }
  const kept = same ? earlier.points.filter((p) => p.runs.length === settings.runs) : [];
  const file: SweepFile = {
    format: 'duplex-bench.sweep',
    version: 1,
    settings,
    points: kept,
    capacity: { sessions: null, range: [null, null], limited_by: null, note: '' },
    interrupted: false,
    resolution: plan.resolution,
    measurement_origin: {
      verdict: settings.arrivals
        ? `pass: every run was pacing-qualified, skipped no arrival, its blocking probability (blocked / arrivals, pooled over the runs, after --warmup-s when given) was at most ${settings.arrivals.max_blocking}, and it met every SLO term; fail: every run qualified, and the blocking or a term failed; client-limited: a run was not pacing-qualified or skipped arrivals (--max-in-flight), so it measured the client, not the server`
        : 'pass: every run was pacing-qualified and met every SLO term; fail: every run qualified, and a term failed; client-limited: a run was not pacing-qualified, so it measured the client, not the server',
      ...(settings.arrivals ? { offered_erlangs: 'the runs\' arrivals.offered_erlangs: rate x the stated mean of --session-duration', blocking_probability: 'blocked / (arrived - client_skipped) summed over the runs (their steady counts after --warmup-s); 95% Wilson interval' } : {}),
      ...Object.fromEntries(terms.map((t) => [`slo ${t.figure}`, sloFigure(t.figure)?.what ?? ''])),
    },
  };
  const save = async () => {
    file.capacity = capacityOf(file.points, min, max, settings.target);
    // The capacity point's server gauges (--server-gauge): what the server held there.
    const at = file.points.find((p) => loadOf(p) === (file.capacity.sessions ?? file.capacity.rate_per_s));
    const gauges = pointGauges(at);
    if (gauges) file.capacity.server_gauges = gauges;
    if (settings.gpus) file.capacity.per_gpu = perGpu(file.capacity, file.points, settings.gpus);
    await writeFile(`${path}.tmp`, JSON.stringify(file, null, 1));
    await rename(`${path}.tmp`, path);
  };
  const runPoint = plan.run ?? scriptRunner(plan.script);
  const running: RunningProcess = { child: null };
  const signals = io.interrupts('the run in progress stops; what was measured is kept in sweep.json', () => running.child?.kill('SIGINT'));
  const extra = settings.run_args.split(/\s+/).filter(Boolean);
  // The process count a run starts with; with auto it only grows, as a client that fell behind at
  // N sessions falls behind at more too.
  let processes = settings.processes === 'auto' ? 1 : settings.processes;
  const arrival = settings.arrivals;
  const label = (load: number) => (arrival ? `${load}/s` : `${load} sessions`);
  const runsAt = async (load: number, p: number): Promise<SweepRun[]> => {
    const runs: SweepRun[] = [];
    const per = Math.ceil(load / p);
    for (let r = 1; r <= settings.runs && !signals.interrupted; r++) {
      const dir = join(output, arrival ? `a${load}-r${r}` : p > 1 ? `s${load}-p${p}-r${r}` : `s${load}-r${r}`);
      io.stderr.write(`sweep: ${label(load)}${p > 1 ? ` over ${p} processes` : ''}, run ${r} of ${settings.runs}\n`);
      const layout = p > 1 ? ['--processes', String(p)] : [];
      // An arrival run: one process, its own seed per run, so repeated runs draw different schedules.
      const load_args = arrival ? ['--arrival-rate', String(load), '--seed', String(arrival.seed + r - 1)] : ['--concurrency', String(per), ...layout];
      // One process judges its own terms as it goes, and a point that already failed stops in seconds.
      const abort = settings.abort_on_fail && p === 1 && terms.some(judgedLive) ? ['--slo', settings.slo, '--abort-on-fail', '--abort-grace-s', String(settings.abort_on_fail.grace_s)] : [];
      const scrape = settings.server ? ['--server-metrics', settings.server.metrics_url, ...settings.server.gauges.flatMap((g) => ['--server-gauge', g])] : [];
      const args = ['--url', plan.url ?? settings.url, '--protocol', settings.protocol, ...load_args, '--duration', String(settings.duration_s), '--output', dir, '--quiet', ...abort, ...scrape, ...extra];
      const { code, error } = await runPoint(['run', ...args], running);
      const summary = await readJsonFile<RunSummary>(runFile(dir, 'summary'));
      // The run's own page, which the sweep's page links from its count (a run that wrote no summary has none).
      if (summary && plan.afterRun && !extra.includes('--report')) await plan.afterRun(dir).catch((err: Error) => io.stderr.write(`warning: sweep: no page for ${dir}: ${err.message}\n`));
      const a = arrival ? runArrivals(summary) : undefined;
      const early = summary?.slo?.aborted;
      if (early) io.stderr.write(`sweep: ${label(load)}, run ${r}: ended early at ${early.at_s} s on ${early.term} (${early.value})\n`);
      runs.push({
        dir,
        processes: p,
        sessions_run: arrival ? (summary?.arrivals?.started ?? 0) : per * p,
        code,
        ...(error ? { error } : {}),
        qualified: summary?.qualified === true,
        slo: summary ? checkSlo(terms, summary) : [],
        ...(early ? { ended_early: { term: early.term, at_s: early.at_s } } : {}),
        ...gaugesOf(summary),
        ...(a ? { arrivals: a } : {}),
      });
    }
    return runs;
  };
  const measure = async (load: number): Promise<PointVerdict> => {
    const done = file.points.find((p) => loadOf(p) === load);
    if (done) {
      processes = Math.max(processes, ...done.runs.map((r) => r.processes ?? 1));
      return done.verdict;
    }
    const limitedAt: number[] = [];
    let runs = await runsAt(load, processes);
    while (!signals.interrupted && settings.processes === 'auto' && verdictOf(runs, settings.target) === 'client-limited' && processes < settings.max_processes) {
      limitedAt.push(processes);
      processes = Math.min(settings.max_processes, processes * 2);
      io.stderr.write(`sweep: ${label(load)}: the client fell behind; again with ${processes} processes\n`);
      runs = await runsAt(load, processes);
    }
    if (signals.interrupted) return 'failed-to-run';
    const verdict = verdictOf(runs, settings.target, arrival?.max_blocking);
    const blocking = arrival ? pooledBlocking(runs) : null;
    const point: SweepPoint = arrival
      ? { rate_per_s: load, offered_erlangs: runs.find((r) => r.arrivals)?.arrivals?.offered_erlangs ?? null, blocking_probability: blocking, runs, verdict }
      : { sessions: load, runs, verdict, ...(limitedAt.length ? { client_limited_at_processes: limitedAt } : {}) };
    file.points.push(point);
    await save();
    const why = point.verdict === 'failed-to-run' ? runs.find((r) => r.error)?.error : undefined;
    const figures = arrival && point.offered_erlangs !== null ? ` (${point.offered_erlangs} Erlangs offered, blocking ${blocking?.rate ?? '-'}, 95% ${blocking?.ci95 ? blocking.ci95.join('..') : '-'})` : '';
    io.stderr.write(`sweep: ${label(load)}: ${point.verdict}${figures}${why ? ` (${why})` : ''}\n`);
    return point.verdict;
  };

  // Session counts are whole; rates are kept to 0.01 sessions/s, so directory names and resumes match.
  const step = (x: number) => (arrival ? Math.round(x * 100) / 100 : Math.round(x));
  try {
    let pass: number | null = null;
    let fail: number | null = null;
    for (let n = min; !signals.interrupted; n = Math.min(max, step(n * 2))) {
      const v = await measure(n);
      if (v !== 'pass') {
        fail = v === 'fail' ? n : null;
        break;
      }
      pass = n;
      if (n >= max) break;
    }
    while (!signals.interrupted && pass !== null && fail !== null && fail - pass > plan.resolution) {
      const mid = step((pass + fail) / 2);
      if (mid === pass || mid === fail) break;
      const v = await measure(mid);
      if (v === 'pass') pass = mid;
      else if (v === 'fail') fail = mid;
      else break;
    }
    file.interrupted = signals.interrupted;
    await save();
  } finally {
    signals.dispose();
  }
  return file;
}
