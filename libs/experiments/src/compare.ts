import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRevision, type RunningProcess } from '@duplex-bench/launcher';
import { readJsonFile, RunFileError, runFile, type RunSummary } from '@duplex-bench/results';
import { ExperimentError } from './experiment-error';
import type { ExperimentIo } from './experiment-io';
import { scriptRunner, type PointRunner } from './point-runner';
import { SLO_FIGURES } from './slo';
import { bootstrapRatio, mannWhitneyP, median, seeded } from './statistics';

/** What compare can measure: the SLO figures, and the client's own pacing (to see the client did not differ). */
export const COMPARE_METRICS: Record<string, { read: (s: RunSummary) => number | null | undefined; what: string }> = {
  ...SLO_FIGURES,
  pacing_p99_ms: { read: (s) => s.pacing_deviation_ms.p99, what: 'client: pacing deviation p99, ms' },
};

export interface Arm {
  label: string;
  flags: string[];
}

export interface CompareRun {
  rep: number;
  arm: string;
  position: number;
  dir: string;
  code: number | null;
  /** The last `error:` line the run wrote, when it wrote one. */
  error?: string;
  qualified: boolean;
  values: Record<string, number | null>;
}

export interface MetricResult {
  metric: string;
  what: string;
  per_arm: Record<string, { median: number | null; min: number | null; max: number | null; n: number }>;
  /** Median of B over median of A, with a 95% bootstrap interval over the repetitions. */
  ratio: number | null;
  interval_95: [number, number] | null;
  /** Exact two-sided Mann-Whitney p of the two arms' values. */
  rank_test_p: number | null;
  verdict: string;
}

export interface CompareFile {
  format: 'duplex-bench.compare';
  version: 1;
  arms: Arm[];
  reps: number;
  seed: number;
  project: unknown;
  warnings: string[];
  runs: CompareRun[];
  results: MetricResult[];
  interrupted: boolean;
  measurement_origin: Record<string, string>;
}

/** A comparison to run: two arms of `run` flags, `reps` repetitions, `metrics` to compare; each run is `script run …`. */
export interface ComparePlan {
  arms: Arm[];
  reps: number;
  metrics: string[];
  output: string;
  /** Seed of the order and the bootstrap when the comparison is new (a resumed one keeps its own). */
  seed: number;
  /** The duplex-bench executable each run starts as a fresh process. */
  script: string;
  /** Runs one run of an arm (`run …` args): by default `script` as a fresh process; a spec gives a fake. */
  run?: PointRunner;
}

/** Flags by name, to see how many settings two arms differ in. */
function settingsOf(flags: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < flags.length; i++) {
    if (!flags[i].startsWith('--')) continue;
    const [name, inline] = flags[i].split('=', 2);
    const value = inline ?? (flags[i + 1] && !flags[i + 1].startsWith('--') ? flags[++i] : 'true');
    out.set(name, value);
  }
  return out;
}

/** `LABEL=FLAGS` as an arm; compare sets the output, so an arm may not. */
export function parseArm(text: string): Arm {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new ExperimentError('BAD_ARM', `--arm must be LABEL=FLAGS, got "${text}"`);
  const label = text.slice(0, eq);
  if (!/^[\w.-]+$/.test(label)) throw new ExperimentError('BAD_ARM', `--arm label "${label}": letters, digits, dot, dash or underscore only`);
  const flags = text.slice(eq + 1).trim().split(/\s+/).filter(Boolean);
  for (const reserved of ['--output', '--json', '--report']) if (flags.some((f) => f === reserved || f.startsWith(`${reserved}=`))) throw new ExperimentError('BAD_ARM', `--arm ${label}: ${reserved} is set by compare`);
  return { label, flags };
}

/**
 * Runs the comparison: every repetition runs both arms once, in a fresh random order, each a fresh
 * process. compare.json in `output` is rewritten after each run; the same arms and reps there resume.
 */
export async function runCompare(plan: ComparePlan, io: ExperimentIo): Promise<CompareFile> {
  const { arms, metrics, output } = plan;
  await mkdir(output, { recursive: true });
  const path = runFile(output, 'compare');
  const earlier = await readJsonFile<CompareFile>(path);
  const same = earlier && JSON.stringify(earlier.arms) === JSON.stringify(arms) && earlier.reps === plan.reps;
  if (same && !(Array.isArray(earlier.runs) && earlier.runs.every((r) => typeof r?.arm === 'string'))) {
    throw new RunFileError(path, 'not a comparison to resume: its arms and reps are these, but "runs" is not a list of runs');
  }
  const seed = same ? earlier.seed : plan.seed;
  const a = settingsOf(arms[0].flags);
  const b = settingsOf(arms[1].flags);
  const differing = [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
  const warnings =
    differing.length > 1 ? [`the arms differ in ${differing.length} settings (${differing.join(', ')}): a difference found cannot be put down to one of them`] : [];
  for (const w of warnings) io.stderr.write(`warning: ${w}\n`);
  const file: CompareFile = {
    format: 'duplex-bench.compare',
    version: 1,
    arms,
    reps: plan.reps,
    seed,
    project: await projectRevision(process.cwd()),
    warnings,
    runs: same ? earlier.runs : [],
    results: [],
    interrupted: false,
    measurement_origin: {
      order: 'each repetition runs every arm once, in a fresh random order from the seed; each run is a fresh process',
      ratio: 'median of B over median of A over the repetitions; 95% interval: percentile bootstrap, both arms resampled with replacement',
      verdict: 'given only where the interval excludes 1 and the exact two-sided Mann-Whitney rank test gives p < 0.05 (never with fewer than 4 runs an arm)',
      ...Object.fromEntries(metrics.map((m) => [m, COMPARE_METRICS[m].what])),
    },
  };
  const random = seeded(seed);
  const save = async () => {
    // The bootstrap draws from its own stream: the same runs give the same interval, resumed or not.
    file.results = metrics.map((m) => resultOf(m, file, seeded(seed + 1)));
    await writeFile(`${path}.tmp`, JSON.stringify(file, null, 1));
    await rename(`${path}.tmp`, path);
  };
  const runArm = plan.run ?? scriptRunner(plan.script);
  const running: RunningProcess = { child: null };
  const signals = io.interrupts('the run in progress stops; what was measured is kept in compare.json', () => running.child?.kill('SIGINT'));
  try {
    for (let rep = 1; rep <= plan.reps && !signals.interrupted; rep++) {
      // The order is drawn for every repetition, also for those kept, so a resumed compare orders as the first did.
      const order = random() < 0.5 ? [arms[0], arms[1]] : [arms[1], arms[0]];
      for (const [position, arm] of order.entries()) {
        if (signals.interrupted || file.runs.some((r) => r.rep === rep && r.arm === arm.label)) continue;
        const dir = join(output, `rep${rep}-${arm.label}`);
        io.stderr.write(`compare: repetition ${rep} of ${plan.reps}, arm ${arm.label}\n`);
        const { code, error } = await runArm(['run', ...arm.flags, '--output', dir, '--quiet'], running);
        if (signals.interrupted) break;
        const summary = await readJsonFile<RunSummary>(runFile(dir, 'summary'));
        const values = Object.fromEntries(metrics.map((m) => [m, summary ? (COMPARE_METRICS[m].read(summary) ?? null) : null]));
        if (error && code !== 0 && code !== 3) io.stderr.write(`compare: repetition ${rep}, arm ${arm.label} failed to run (${error})\n`);
        file.runs.push({ rep, arm: arm.label, position, dir, code, ...(error ? { error } : {}), qualified: summary?.qualified === true, values });
        await save();
      }
    }
    file.interrupted = signals.interrupted;
    await save();
  } finally {
    signals.dispose();
  }
  return file;
}

/** One metric over the qualified runs of both arms. */
function resultOf(metric: string, file: CompareFile, random: () => number): MetricResult {
  const [A, B] = file.arms.map((a) => a.label);
  const values = (label: string) => file.runs.filter((r) => r.arm === label && r.qualified && r.values[metric] !== null).map((r) => r.values[metric] as number);
  const per_arm = Object.fromEntries(
    [A, B].map((l) => {
      const v = values(l);
      const r = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);
      return [l, { median: r(median(v)), min: v.length ? r(Math.min(...v)) : null, max: v.length ? r(Math.max(...v)) : null, n: v.length }];
    }),
  );
  const { ratio, interval } = values(A).length >= 2 && values(B).length >= 2 ? bootstrapRatio(values(A), values(B), random) : { ratio: null, interval: null };
  const p = values(A).length >= 2 && values(B).length >= 2 ? Math.round(mannWhitneyP(values(A), values(B)) * 10000) / 10000 : null;
  // A percentile bootstrap over a handful of runs is too narrow: a verdict also needs the exact rank
  // test under 0.05 (two identical arms of 3 runs once gave an interval of [1.0047, …] here).
  let verdict = 'too few qualified runs to compare';
  if (interval && p !== null) {
    const apart = p < 0.05;
    if (interval[0] > 1 && apart) verdict = `${B} is higher than ${A} (the interval excludes 1, rank test p ${p})`;
    else if (interval[1] < 1 && apart) verdict = `${B} is lower than ${A} (the interval excludes 1, rank test p ${p})`;
    else if (interval[0] > 1 || interval[1] < 1) verdict = `no difference shown: the interval excludes 1 but the rank test gives p ${p} (more repetitions would tell)`;
    else verdict = 'no difference shown (the interval includes 1)';
  }
  return { metric, what: COMPARE_METRICS[metric].what, per_arm, ratio, interval_95: interval, rank_test_p: p, verdict };
}
