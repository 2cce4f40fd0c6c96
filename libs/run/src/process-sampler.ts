import { runNodeScript, type RunningProcess, type ScriptExit } from '@duplex-bench/launcher';
import { STALL_MS } from '@duplex-bench/metrics';
import { readSamplerFile } from '@duplex-bench/results';
import { attributeStalls, samplerModule, stallsSummary, type StallsSummary } from '@duplex-bench/telemetry';
import type { ProcessMeasures } from './process-measures';

/**
 * `--sampler`: the external /proc sampler in a process of its own, started before the sessions and
 * stopped after them; then each loop stall of this process is given its cause from what it saw.
 */
export class ProcessSampler {
  private readonly running: RunningProcess = { child: null };
  private readonly exit: Promise<ScriptExit>;

  constructor(pids: number[], file: string, interval_ms: number, max_s: number) {
    this.exit = runNodeScript(samplerModule(), ['--pids', pids.join(','), '--out', file, '--interval-ms', String(interval_ms), '--max-s', String(Math.ceil(max_s))], this.running);
  }

  /** Ends the sampler (SIGTERM: it writes its own account and exits), bounded: past 5 s it is killed. */
  async stop(): Promise<ScriptExit> {
    const child = this.running.child;
    if (child && child.exitCode === null) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<ScriptExit>((resolve) => {
      timer = setTimeout(() => {
        this.running.child?.kill('SIGKILL');
        resolve({ code: null, error: 'the sampler did not end within 5 s of SIGTERM; killed' });
      }, 5000);
    });
    const exit = await Promise.race([this.exit, killed]);
    clearTimeout(timer);
    return exit;
  }

  /**
   * This process's stalls, each with its cause, from the sampler's file in `dir`. With `shared` (a
   * launcher's sampler, still running), first waits (up to 2 s) for a look at this process later
   * than its last stall, so the last one is bracketed too.
   */
  static async stalls(dir: string, measures: ProcessMeasures, gate_s: number, shared = false): Promise<StallsSummary> {
    let file = await readSamplerFile(dir, process.pid);
    const last_s = measures.loop.stalls.at(-1)?.end_s ?? -Infinity;
    for (let waited = 0; shared && waited < 2000 && !((file?.samples.at(-1)?.t_s ?? -Infinity) > last_s + 0.05); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
      file = await readSamplerFile(dir, process.pid);
    }
    const attributed = attributeStalls(measures.loop.stalls, measures.gc.pauses, file?.samples ?? []);
    // A shared sampler's account is the launcher's to state.
    return stallsSummary(attributed, STALL_MS, shared ? null : (file?.footer ?? null), gate_s);
  }
}
