import { runNodeScript, type RunningProcess } from '@duplex-bench/launcher';

/** How one run ended: its exit status (null when a signal ended it), and the last `error:` line it wrote, when it wrote one. */
export interface PointExit {
  code: number | null;
  error?: string | null;
}

/**
 * Runs one `duplex-bench run` of a sweep's point or a comparison's arm: `args` begin with `run` and
 * hold its `--output`, where the run leaves its summary.json for the caller to read. `running` holds
 * the process while it runs, so an interrupt reaches it.
 */
export type PointRunner = (args: string[], running: RunningProcess) => Promise<PointExit>;

/** The runner of a real sweep or comparison: each run a fresh `node script …` process. */
export function scriptRunner(script: string): PointRunner {
  return (args, running) => runNodeScript(script, args, running);
}
