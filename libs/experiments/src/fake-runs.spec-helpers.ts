// Runs of a sweep or a comparison without processes: each fake run writes the summary.json a real
// `run` would, from a model the spec states, into the --output its args name.
import { mkdir, writeFile } from 'node:fs/promises';
import { runFile, type ArrivalsSummary, type RunSummary } from '@duplex-bench/results';
import type { ExperimentIo } from './experiment-io';
import type { PointRunner } from './point-runner';

type Duplex = NonNullable<RunSummary['duplex']>;
type Behaviour = NonNullable<RunSummary['behaviour']>;

/**
 * The part of a run's summary.json that a sweep or a comparison reads, as RunSummary types it:
 * `qualified`, the figures of the SLO terms and compare metrics the specs use (checkSlo,
 * COMPARE_METRICS), and the arrival counts (runArrivals). A fake run writes these and nothing more.
 */
export interface ReadFigures extends Pick<RunSummary, 'qualified'>, Partial<Pick<RunSummary, 'sessions' | 'slo'>> {
  duplex?: Partial<Pick<Duplex, 'playback_underruns'>> & { ttfp_ms: Pick<Duplex['ttfp_ms'], 'p99'> };
  behaviour?: Pick<Behaviour, 'stop_latency_ms'>;
  arrivals?: Pick<ArrivalsSummary, 'offered_erlangs' | 'arrived' | 'client_skipped' | 'started' | 'blocked' | 'blocking_probability' | 'steady'>;
}

/** A run that did not run: its exit status and the `error:` line it ended on, no summary written. */
export interface FailedRun {
  code: number | null;
  error: string;
}

/** What the server and client a run measures would have made of it: its figures, or a failure. */
export type RunModel = (args: string[]) => ReadFigures | FailedRun;

/** The value of `name` in a run's args; a run without it fails the spec. */
export function flag(args: string[], name: string): string {
  const at = args.indexOf(name);
  if (at < 0 || at + 1 >= args.length) throw new Error(`no ${name} in ${args.join(' ')}`);
  return args[at + 1];
}

/** The sessions a run streamed: --concurrency in each of its --processes. */
export function sessionsOf(args: string[]): number {
  return Number(flag(args, '--concurrency')) * (args.includes('--processes') ? Number(flag(args, '--processes')) : 1);
}

/** The nearest-rank percentile `q` (0..1) of `values`. */
export function percentile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(q * s.length) - 1)];
}

/**
 * A point runner whose runs are `model`: a run that ran writes its figures to summary.json in its
 * --output and exits as a real run does (0 when qualified, 3 when not); a failed run writes nothing.
 * `calls` keeps every run's args in the order the runs started.
 */
export function fakeRuns(model: RunModel): { run: PointRunner; calls: string[][] } {
  const calls: string[][] = [];
  const run: PointRunner = async (args) => {
    calls.push(args);
    const out = model(args);
    if ('error' in out) return out;
    const dir = flag(args, '--output');
    await mkdir(dir, { recursive: true });
    await writeFile(runFile(dir, 'summary'), JSON.stringify(out));
    // A run its own SLO ended early (--abort-on-fail) exits 4.
    return { code: !out.qualified ? 3 : out.slo?.aborted ? 4 : 0, error: null };
  };
  return { run, calls };
}

/** An ExperimentIo that keeps what was written; `interrupt()` is the operator's first Ctrl-C. */
export function memoryIo(): ExperimentIo & { written(): string; interrupt(): void } {
  let text = '';
  let interrupted = false;
  let stop: (() => void) | null = null;
  return {
    stderr: { write: (s: string) => (text += s) },
    interrupts(_what, onStop) {
      stop = onStop;
      return {
        get interrupted() {
          return interrupted;
        },
        dispose: () => (stop = null),
      };
    },
    written: () => text,
    interrupt() {
      interrupted = true;
      stop?.();
    },
  };
}
