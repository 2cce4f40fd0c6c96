import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT, Interrupts, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { projectRevision, runNodeScript, type RunningProcess } from '@duplex-bench/launcher';
import type { RunSummary } from '@duplex-bench/session';
import { SLO_FIGURES } from './slo';

/** What compare can measure: the SLO figures, and the client's own pacing (to see the client did not differ). */
export const COMPARE_METRICS: Record<string, { read: (s: RunSummary) => number | null | undefined; what: string }> = {
  ...SLO_FIGURES,
  pacing_p99_ms: { read: (s) => s.pacing_deviation_ms.p99, what: 'client: pacing deviation p99, ms' },
};

export const COMPARE_FLAGS = {
  arm: { kind: 'list', required: true, group: 'load', help: "an arm: LABEL='flags of duplex-bench run' (give exactly two; the first is A, the baseline)", value: 'LABEL=FLAGS' },
  reps: { kind: 'int', min: 2, default: 5, group: 'load', help: 'repetitions; each runs every arm once, in a fresh random order, each run a fresh process', value: 'N' },
  metric: { kind: 'string', default: 'ttfp_p99_ms', group: 'output', help: `figures to compare, joined by commas: ${Object.keys(COMPARE_METRICS).join(', ')}`, value: 'NAMES' },
  output: { kind: 'string', required: true, group: 'output', help: 'compare directory: compare.json and one run directory per run; running again resumes', value: 'DIR' },
  seed: { kind: 'int', min: 0, group: 'testing', help: 'seed of the arm order and the bootstrap (default: from the clock, recorded)', value: 'N' },
} as const;

interface Arm {
  label: string;
  flags: string[];
}

export interface CompareRun {
  rep: number;
  arm: string;
  position: number;
  dir: string;
  code: number | null;
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

const BIN = join(__dirname, '..', '..', '..', '..', 'bin', 'duplex-bench.js');

/** A small seeded generator (mulberry32): the order of arms and the bootstrap can be replayed from the recorded seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const median = (v: number[]): number | null => {
  if (v.length === 0) return null;
  const s = [...v].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * B/A of medians with a 95% percentile-bootstrap interval: both arms resampled with replacement,
 * `draws` times. A verdict only where the interval excludes 1.
 */
export function bootstrapRatio(a: number[], b: number[], random: () => number, draws = 4000): { ratio: number | null; interval: [number, number] | null } {
  const ma = median(a);
  const mb = median(b);
  if (ma === null || mb === null || ma === 0) return { ratio: null, interval: null };
  const pick = (v: number[]) => Array.from({ length: v.length }, () => v[Math.floor(random() * v.length)]);
  const ratios: number[] = [];
  for (let i = 0; i < draws; i++) {
    const da = median(pick(a)) as number;
    if (da !== 0) ratios.push((median(pick(b)) as number) / da);
  }
  ratios.sort((x, y) => x - y);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.max(0, Math.floor(q * ratios.length)))];
  const round = (x: number) => Math.round(x * 10000) / 10000;
  return { ratio: round(mb / ma), interval: [round(at(0.025)), round(at(0.975))] };
}

/**
 * Exact two-sided p of the Mann-Whitney rank test (ties count a half): how often arms drawn from one
 * distribution would order their values at least this unevenly. With 3 runs an arm it cannot go
 * below 0.1, so no verdict is given on so few, however the bootstrap interval falls.
 */
export function mannWhitneyP(a: number[], b: number[]): number {
  const n = a.length;
  const m = b.length;
  let u = 0;
  for (const x of a) for (const y of b) u += y > x ? 1 : y === x ? 0.5 : 0;
  // ways[i][j][k]: orderings of i values of A and j of B with k (A, B) pairs where B is above.
  let ways: number[][][] = Array.from({ length: n + 1 }, () => Array.from({ length: m + 1 }, () => [] as number[]));
  for (let i = 0; i <= n; i++) {
    for (let j = 0; j <= m; j++) {
      const w = new Array(i * j + 1).fill(0);
      if (i === 0 || j === 0) w[0] = 1;
      else {
        // The largest value is B's (above all i values of A) or A's (above none of B).
        ways[i][j - 1].forEach((c, k) => (w[k + i] += c));
        ways[i - 1][j].forEach((c, k) => (w[k] += c));
      }
      ways[i][j] = w;
    }
  }
  const dist = ways[n][m];
  ways = [];
  const total = dist.reduce((s, c) => s + c, 0);
  const below = dist.reduce((s, c, k) => s + (k <= u ? c : 0), 0) / total;
  const above = dist.reduce((s, c, k) => s + (k >= u ? c : 0), 0) / total;
  return Math.min(1, 2 * Math.min(below, above));
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

function parseArm(text: string): Arm {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--arm must be LABEL=FLAGS, got "${text}"`);
  const label = text.slice(0, eq);
  if (!/^[\w.-]+$/.test(label)) throw new UsageError(`--arm label "${label}": letters, digits, dot, dash or underscore only`);
  const flags = text.slice(eq + 1).trim().split(/\s+/).filter(Boolean);
  for (const reserved of ['--output', '--json', '--report']) if (flags.some((f) => f === reserved || f.startsWith(`${reserved}=`))) throw new UsageError(`--arm ${label}: ${reserved} is set by compare`);
  return { label, flags };
}

async function compare(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, COMPARE_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  const arms = f.arm.map(parseArm);
  if (arms.length !== 2) throw new UsageError(`compare takes exactly two --arm, got ${arms.length}`);
  if (arms[0].label === arms[1].label) throw new UsageError('the two arms need different labels');
  const metrics = f.metric.split(',').map((m) => m.trim());
  for (const m of metrics) if (!COMPARE_METRICS[m]) throw new UsageError(`--metric: unknown figure "${m}"; the figures are ${Object.keys(COMPARE_METRICS).join(', ')}`);

  await mkdir(f.output, { recursive: true });
  const path = join(f.output, 'compare.json');
  const earlier = await readFile(path, 'utf8').then((t) => JSON.parse(t) as CompareFile, () => null);
  const same = earlier && JSON.stringify(earlier.arms) === JSON.stringify(arms) && earlier.reps === f.reps;
  const seed = same ? earlier.seed : (f.seed ?? Date.now() % 2 ** 31);
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
    reps: f.reps,
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
  const running: RunningProcess = { child: null };
  const signals = new Interrupts(io, 'the run in progress stops; what was measured is kept in compare.json', () => running.child?.kill('SIGINT'));
  try {
    for (let rep = 1; rep <= f.reps && !signals.interrupted; rep++) {
      // The order is drawn for every repetition, also for those kept, so a resumed compare orders as the first did.
      const order = random() < 0.5 ? [arms[0], arms[1]] : [arms[1], arms[0]];
      for (const [position, arm] of order.entries()) {
        if (signals.interrupted || file.runs.some((r) => r.rep === rep && r.arm === arm.label)) continue;
        const dir = join(f.output, `rep${rep}-${arm.label}`);
        io.stderr.write(`compare: repetition ${rep} of ${f.reps}, arm ${arm.label}\n`);
        const code = await runNodeScript(BIN, ['run', ...arm.flags, '--output', dir, '--quiet'], running);
        if (signals.interrupted) break;
        const summary = await readFile(join(dir, 'summary.json'), 'utf8').then((t) => JSON.parse(t) as RunSummary, () => null);
        const values = Object.fromEntries(metrics.map((m) => [m, summary ? (COMPARE_METRICS[m].read(summary) ?? null) : null]));
        file.runs.push({ rep, arm: arm.label, position, dir, code, qualified: summary?.qualified === true, values });
        await save();
      }
    }
    file.interrupted = signals.interrupted;
    await save();
  } finally {
    signals.dispose();
  }
  const unqualified = file.runs.filter((r) => !r.qualified).length;
  io.stdout.write(
    [
      ...file.results.map((r) => {
        const arm = (l: string) => {
          const x = r.per_arm[l];
          return `${l} median ${x.median ?? '-'} [${x.min ?? '-'}–${x.max ?? '-'}] (n ${x.n})`;
        };
        const ci = r.interval_95 ? ` [${r.interval_95[0]}, ${r.interval_95[1]}]` : '';
        return `${r.metric}: ${arm(arms[0].label)}; ${arm(arms[1].label)}; ${arms[1].label}/${arms[0].label} ${r.ratio ?? '-'}${ci}: ${r.verdict}`;
      }),
      ...(unqualified > 0 ? [`${unqualified} run(s) missed the client's cadence and are left out: they measured the client, not the server`] : []),
      `written to ${path}`,
    ].join('\n') + '\n',
  );
  io.emit?.(file);
  return file.interrupted ? EXIT.interrupted : EXIT.ok;
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

export const COMPARE_COMMAND: CliCommand = {
  name: 'compare',
  summary: 'A/B: runs two arms interleaved in random order, fresh processes, and says which is better only where a bootstrap interval excludes 1',
  usage: "--arm A='run flags' --arm B='run flags' --output DIR [--reps N] [--metric NAMES]",
  flags: COMPARE_FLAGS,
  json: true,
  run: compare,
};
