import { readFileSync } from 'node:fs';

/**
 * One look at a thread through /proc (Linux), as seed 000's external sampler took it: its state
 * (R running or runnable, S sleeping, D uninterruptible, usually disk), the kernel function it
 * sleeps in (wchan), and from schedstat its time on a CPU and its time waiting in the run queue.
 */
export interface ThreadSample {
  /** Monotonic seconds (CLOCK_MONOTONIC, the probe's clock). */
  t_s: number;
  pid: number;
  state: string;
  /** Cumulative ns on a CPU, and waiting for one (schedstat fields 1 and 2), in ms. */
  run_ms: number;
  wait_ms: number;
  /** The kernel function a sleeping thread waits in ('0' or '' when running). */
  wchan: string;
}

/** The state letter of a /proc stat line: the field after the command name's closing parenthesis. */
export function stateOf(stat: string): string {
  const close = stat.lastIndexOf(')');
  return close < 0 ? '?' : (stat.slice(close + 2, close + 3) || '?');
}

/** schedstat's "run_ns wait_ns timeslices" in ms. */
export function schedstatOf(text: string): { run_ms: number; wait_ms: number } {
  const [run, wait] = text.trim().split(/\s+/).map(Number);
  return { run_ms: (run ?? 0) / 1e6, wait_ms: (wait ?? 0) / 1e6 };
}

const now_s = () => Number(process.hrtime.bigint()) / 1e9;

/** The main thread (the event loop) of `pid`; null once it is gone. */
export function sampleThread(pid: number): ThreadSample | null {
  const dir = `/proc/${pid}/task/${pid}`;
  try {
    const t_s = now_s();
    const state = stateOf(readFileSync(`${dir}/stat`, 'latin1'));
    const { run_ms, wait_ms } = schedstatOf(readFileSync(`${dir}/schedstat`, 'latin1'));
    const wchan = readFileSync(`${dir}/wchan`, 'latin1').trim();
    return { t_s, pid, state, run_ms, wait_ms, wchan: wchan === '0' ? '' : wchan };
  } catch {
    return null;
  }
}
