import { EXIT, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { COMPARE_METRICS, parseArm, runCompare, type CompareFile } from '@duplex-bench/experiments';
import { experimentIo } from './experiment-io';
import { DUPLEX_BENCH_MODULE } from './sweep-command';
import { runFile } from '@duplex-bench/results';

export const COMPARE_FLAGS = {
  arm: { kind: 'list', required: true, group: 'load', help: "an arm: LABEL='flags of duplex-bench run' (give exactly two; the first is A, the baseline)", value: 'LABEL=FLAGS' },
  reps: { kind: 'int', min: 2, default: 5, group: 'load', help: 'repetitions; each runs every arm once, in a fresh random order, each run a fresh process', value: 'N' },
  metric: { kind: 'string', default: 'ttfp_p99_ms', group: 'output', help: `figures to compare, joined by commas: ${Object.keys(COMPARE_METRICS).join(', ')}`, value: 'NAMES' },
  output: { kind: 'string', required: true, group: 'output', help: 'compare directory: compare.json and one run directory per run; running again resumes', value: 'DIR' },
  seed: { kind: 'int', min: 0, group: 'testing', help: 'seed of the arm order and the bootstrap (default: from the clock, recorded)', value: 'N' },
} as const;

function render(file: CompareFile): string {
  const [A, B] = file.arms.map((a) => a.label);
  const unqualified = file.runs.filter((r) => !r.qualified).length;
  const lines = file.results.map((r) => {
    const arm = (l: string) => {
      const x = r.per_arm[l];
      return `${l} median ${x.median ?? '-'} [${x.min ?? '-'}–${x.max ?? '-'}] (n ${x.n})`;
    };
    const ci = r.interval_95 ? ` [${r.interval_95[0]}, ${r.interval_95[1]}]` : '';
    return `${r.metric}: ${arm(A)}; ${arm(B)}; ${B}/${A} ${r.ratio ?? '-'}${ci}: ${r.verdict}`;
  });
  if (unqualified > 0) lines.push(`${unqualified} run(s) missed the client's cadence and are left out: they measured the client, not the server`);
  return lines.join('\n');
}

async function compare(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, COMPARE_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  const arms = f.arm.map(parseArm);
  if (arms.length !== 2) throw new UsageError(`compare takes exactly two --arm, got ${arms.length}`);
  if (arms[0].label === arms[1].label) throw new UsageError('the two arms need different labels');
  const metrics = f.metric.split(',').map((m) => m.trim());
  for (const m of metrics) if (!COMPARE_METRICS[m]) throw new UsageError(`--metric: unknown figure "${m}"; the figures are ${Object.keys(COMPARE_METRICS).join(', ')}`);
  const file = await runCompare({ arms, reps: f.reps, metrics, output: f.output, seed: f.seed ?? Date.now() % 2 ** 31, script: DUPLEX_BENCH_MODULE }, experimentIo(io));
  io.stdout.write(`${render(file)}\nwritten to ${runFile(f.output, 'compare')}\n`);
  io.emit?.(file);
  return file.interrupted ? EXIT.interrupted : EXIT.ok;
}

export const COMPARE_COMMAND: CliCommand = {
  name: 'compare',
  summary: 'A/B: runs two arms interleaved in random order, fresh processes, and says which is better only where a bootstrap interval excludes 1',
  usage: "--arm A='run flags' --arm B='run flags' --output DIR [--reps N] [--metric NAMES]",
  flags: COMPARE_FLAGS,
  json: true,
  run: compare,
};
