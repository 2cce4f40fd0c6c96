import { EXIT, parseFlags, UsageError, type RunIo } from '@duplex-bench/cli';
import { COMPARE_METRICS, parseArm, runCompare, type CompareFile } from '@duplex-bench/experiments';
import { experimentIo } from './experiment-io';
import { DUPLEX_BENCH_MODULE } from './sweep-command';
import { runFile } from '@duplex-bench/results';
import { COMPARE_FLAGS } from './compare-flags';

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

/** `compare`: two arms run interleaved; the verdict only where a bootstrap interval excludes 1. */
export async function compareCommand(argv: string[], io: RunIo): Promise<number> {
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
