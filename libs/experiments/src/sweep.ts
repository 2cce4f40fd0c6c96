import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runNodeScript, type RunningProcess } from '@duplex-bench/launcher';
import { runFile, type RunSummary } from '@duplex-bench/results';
import type { ExperimentIo } from './experiment-io';
import { checkSlo, SLO_FIGURES, type SloCheck, type SloTerm } from './slo';

/** How one session count fared: `client-limited` when the client missed its cadence in any run (never the server's limit). */
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
}

export interface SweepPoint {
  sessions: number;
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
}

export interface SweepFile {
  format: 'duplex-bench.sweep';
  version: 1;
  settings: SweepSettings;
  points: SweepPoint[];
  capacity: { sessions: number | null; range: [number | null, number | null]; limited_by: 'server' | 'client' | 'search range' | null; note: string };
  interrupted: boolean;
  measurement_origin: Record<string, string>;
}

/** What a sweep searches: counts from `min` to `max`, bisected down to `resolution`; each run is `script run …`. */
export interface SweepPlan {
  settings: SweepSettings;
  terms: SloTerm[];
  min: number;
  max: number;
  resolution: number;
  output: string;
  /** The duplex-bench executable each run starts as a fresh process. */
  script: string;
}

function verdictOf(runs: SweepRun[], target: 'server' | 'client'): PointVerdict {
  if (runs.some((r) => r.code !== 0 && r.code !== 3)) return 'failed-to-run';
  // Sweeping the client, its cadence is the thing measured: a late packet fails the count.
  if (target === 'client') return runs.every((r) => r.qualified) ? 'pass' : 'fail';
  if (runs.some((r) => !r.qualified)) return 'client-limited';
  return runs.every((r) => r.slo.every((c) => c.ok)) ? 'pass' : 'fail';
}

/** ", with N processes" when the point's runs used more than one. */
function limitedProcesses(points: SweepPoint[], sessions: number): string {
  const p = Math.max(1, ...(points.find((x) => x.sessions === sessions)?.runs.map((r) => r.processes ?? 1) ?? [1]));
  return p > 1 ? ` with ${p} processes` : '';
}

/** The capacity the points show: the largest passing count below the smallest failing one. */
export function capacityOf(points: SweepPoint[], min: number, max: number, target: 'server' | 'client' = 'server'): SweepFile['capacity'] {
  const passing = points.filter((p) => p.verdict === 'pass').map((p) => p.sessions);
  const failing = points.filter((p) => p.verdict === 'fail').map((p) => p.sessions);
  const limited = points.filter((p) => p.verdict === 'client-limited' || p.verdict === 'failed-to-run').map((p) => p.sessions);
  const firstFail = failing.length ? Math.min(...failing) : null;
  const firstLimited = limited.length ? Math.min(...limited) : null;
  const below = (n: number) => (firstFail === null || n < firstFail) && (firstLimited === null || n < firstLimited);
  const lastPass = passing.filter(below).length ? Math.max(...passing.filter(below)) : null;
  if (firstLimited !== null && (firstFail === null || firstLimited < firstFail)) {
    return {
      sessions: lastPass,
      range: [lastPass, null],
      limited_by: 'client',
      note: `the client missed its cadence (or a run failed) at ${firstLimited} sessions${limitedProcesses(points, firstLimited)}: the server held ${lastPass ?? 'no tested count'}, and its limit was not reached; spread the load over more processes (--processes auto) or hosts`,
    };
  }
  if (firstFail === null) return { sessions: lastPass, range: [lastPass, null], limited_by: 'search range', note: `every count up to ${max} passed: the capacity is at least ${lastPass}` };
  const by = target === 'client' ? 'client' : 'server';
  const what = target === 'client' ? 'the probe kept its cadence' : 'passes';
  if (lastPass === null) return { sessions: null, range: [null, firstFail], limited_by: by, note: `the smallest count, ${min}, already failed` };
  return { sessions: lastPass, range: [lastPass, firstFail], limited_by: by, note: `${what} at ${lastPass}, ${target === 'client' ? 'not' : 'fails'} at ${firstFail}` };
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
  const earlier = await readFile(path, 'utf8').then((t) => JSON.parse(t) as SweepFile, () => null);
  const kept = earlier && JSON.stringify(earlier.settings) === JSON.stringify(settings) ? earlier.points.filter((p) => p.runs.length === settings.runs) : [];
  const file: SweepFile = {
    format: 'duplex-bench.sweep',
    version: 1,
    settings,
    points: kept,
    capacity: { sessions: null, range: [null, null], limited_by: null, note: '' },
    interrupted: false,
    measurement_origin: {
      verdict: 'pass: every run was pacing-qualified and met every SLO term; fail: every run qualified, and a term failed; client-limited: a run was not pacing-qualified, so it measured the client, not the server',
      ...Object.fromEntries(terms.map((t) => [`slo ${t.figure}`, SLO_FIGURES[t.figure].what])),
    },
  };
  const save = async () => {
    file.capacity = capacityOf(file.points, min, max, settings.target);
    await writeFile(`${path}.tmp`, JSON.stringify(file, null, 1));
    await rename(`${path}.tmp`, path);
  };
  const running: RunningProcess = { child: null };
  const signals = io.interrupts('the run in progress stops; what was measured is kept in sweep.json', () => running.child?.kill('SIGINT'));
  const extra = settings.run_args.split(/\s+/).filter(Boolean);
  // The process count a run starts with; with auto it only grows, as a client that fell behind at
  // N sessions falls behind at more too.
  let processes = settings.processes === 'auto' ? 1 : settings.processes;
  const runsAt = async (sessions: number, p: number): Promise<SweepRun[]> => {
    const runs: SweepRun[] = [];
    const per = Math.ceil(sessions / p);
    for (let r = 1; r <= settings.runs && !signals.interrupted; r++) {
      const dir = join(output, p > 1 ? `s${sessions}-p${p}-r${r}` : `s${sessions}-r${r}`);
      io.stderr.write(`sweep: ${sessions} sessions${p > 1 ? ` over ${p} processes` : ''}, run ${r} of ${settings.runs}\n`);
      const layout = p > 1 ? ['--processes', String(p)] : [];
      const args = ['--url', settings.url, '--protocol', settings.protocol, '--concurrency', String(per), ...layout, '--duration', String(settings.duration_s), '--output', dir, '--quiet', ...extra];
      const { code, error } = await runNodeScript(plan.script, ['run', ...args], running);
      const summary = await readFile(runFile(dir, 'summary'), 'utf8').then((t) => JSON.parse(t) as RunSummary, () => null);
      runs.push({ dir, processes: p, sessions_run: per * p, code, ...(error ? { error } : {}), qualified: summary?.qualified === true, slo: summary ? checkSlo(terms, summary) : [] });
    }
    return runs;
  };
  const measure = async (sessions: number): Promise<PointVerdict> => {
    const done = file.points.find((p) => p.sessions === sessions);
    if (done) {
      processes = Math.max(processes, ...done.runs.map((r) => r.processes ?? 1));
      return done.verdict;
    }
    const limitedAt: number[] = [];
    let runs = await runsAt(sessions, processes);
    while (!signals.interrupted && settings.processes === 'auto' && verdictOf(runs, settings.target) === 'client-limited' && processes < settings.max_processes) {
      limitedAt.push(processes);
      processes = Math.min(settings.max_processes, processes * 2);
      io.stderr.write(`sweep: ${sessions} sessions: the client fell behind; again with ${processes} processes\n`);
      runs = await runsAt(sessions, processes);
    }
    if (signals.interrupted) return 'failed-to-run';
    const point: SweepPoint = { sessions, runs, verdict: verdictOf(runs, settings.target), ...(limitedAt.length ? { client_limited_at_processes: limitedAt } : {}) };
    file.points.push(point);
    await save();
    const why = point.verdict === 'failed-to-run' ? runs.find((r) => r.error)?.error : undefined;
    io.stderr.write(`sweep: ${sessions} sessions: ${point.verdict}${why ? ` (${why})` : ''}\n`);
    return point.verdict;
  };

  try {
    let pass: number | null = null;
    let fail: number | null = null;
    for (let n = min; !signals.interrupted; n = Math.min(max, n * 2)) {
      const v = await measure(n);
      if (v !== 'pass') {
        fail = v === 'fail' ? n : null;
        break;
      }
      pass = n;
      if (n >= max) break;
    }
    while (!signals.interrupted && pass !== null && fail !== null && fail - pass > plan.resolution) {
      const mid = Math.round((pass + fail) / 2);
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
