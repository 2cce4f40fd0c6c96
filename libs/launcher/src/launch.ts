import { execFile, fork, type ChildProcess } from 'node:child_process';
import { monotonicClock, timersOn, type Clock, type TimerHost } from '@duplex-bench/pacer';
import type { CpuPlan } from './cpu-plan';
import { nodeFlagsFor } from './entry-module';
import { CHILD_ENV, decodeMessage, encodeMessage, type FromChild } from './ipc';

export interface LaunchOptions {
  /** The child's entry module (`.ts` runs through tsx). */
  module: string;
  count: number;
  /** Arguments of child `index`. */
  args(index: number): string[];
  /** Added to each child's environment (secrets go here, not on the command line). */
  env?: Record<string, string>;
  /** Bound on every child being connected and ready. */
  start_timeout_ms: number;
  /** Bound on the whole run once started; children still running then are killed. */
  run_timeout_ms: number;
  /** From the gate decision to the common start. */
  gate_margin_ms?: number;
  cpu?: CpuPlan;
  clock?: Clock;
  /** The timers of the start and run bounds and the kill grace (default: real ones reading `clock`). */
  timers?: TimerHost;
  /** Each line a child prints on stderr. */
  onStderr?(index: number, line: string): void;
  /** Told of each child's PID as it is started (an external sampler watches them). */
  onSpawned?(index: number, pid: number): void;
}

export interface ChildOutcome {
  index: number;
  pid: number | undefined;
  ready: boolean;
  exit_code: number | null;
  signal: string | null;
  /** Why the child did not finish normally, if it did not. */
  failure: string | null;
}

export interface LaunchResult {
  /** Set when the run never started: which child failed before the gate, and why. */
  start_failure: { index: number; reason: string } | null;
  gate_s: number | null;
  children: ChildOutcome[];
}

const KILL_GRACE_MS = 5000;

/** Pins every thread of `pid` to `cpus` with taskset (util-linux); resolves with an error message, or null. */
export function pinProcess(pid: number, cpus: number[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('taskset', ['-a', '-cp', cpus.join(','), String(pid)], { timeout: 5000 }, (err) => resolve(err ? err.message : null));
  });
}

/**
 * Starts `count` children, waits (bounded) until every one is ready, then gives all of them one
 * start time on the shared monotonic clock. A child that exits or fails before the gate fails the
 * launch within the bound, naming the child and its reason; the others are stopped, by PID.
 */
export class Launcher {
  private readonly children: ChildProcess[] = [];
  private readonly outcomes: ChildOutcome[] = [];
  private readonly lastLine: string[] = [];

  private readonly timers: TimerHost;

  constructor(private readonly options: LaunchOptions) {
    this.timers = options.timers ?? timersOn(options.clock ?? monotonicClock);
  }

  /** PIDs of the children, by index. */
  childPids(): Array<number | undefined> {
    return this.outcomes.map((o) => o.pid);
  }

  /** How many children have reported ready. */
  readyChildren(): number {
    return this.outcomes.filter((o) => o.ready).length;
  }

  /** Sends SIGTERM to every child still running (they stop sending, drain and write a summary). */
  interrupt(): void {
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }

  async run(): Promise<LaunchResult> {
    const { count, clock = monotonicClock } = this.options;
    const exited: Array<Promise<void>> = [];
    let readyCount = 0;
    let startFailure: LaunchResult['start_failure'] = null;
    let onReady: () => void = () => undefined;
    let onStartFailure: () => void = () => undefined;
    const allReady = new Promise<void>((resolve) => (onReady = resolve));
    const failedBeforeGate = new Promise<void>((resolve) => (onStartFailure = resolve));
    const failBeforeGate = (index: number, reason: string) => {
      if (startFailure || readyCount === count) return;
      startFailure = { index, reason };
      onStartFailure();
    };

    for (let index = 0; index < count; index++) {
      const outcome: ChildOutcome = { index, pid: undefined, ready: false, exit_code: null, signal: null, failure: null };
      this.outcomes.push(outcome);
      const child = fork(this.options.module, this.options.args(index), {
        execArgv: nodeFlagsFor(this.options.module),
        env: { ...process.env, ...this.options.env, [CHILD_ENV]: String(index) },
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      this.children.push(child);
      outcome.pid = child.pid;
      if (child.pid !== undefined) this.options.onSpawned?.(index, child.pid);
      let buffered = '';
      child.stderr?.on('data', (d: Buffer) => {
        buffered += d.toString('utf8');
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim()) this.lastLine[index] = line;
          this.options.onStderr?.(index, line);
        }
      });
      child.on('message', (bytes: unknown) => {
        const m = decodeMessage<FromChild>(bytes);
        switch (m.kind) {
          case 'ready':
            outcome.ready = true;
            if (++readyCount === count) onReady();
            break;
          case 'failed':
            outcome.failure = m.message;
            failBeforeGate(index, `failed before the start gate: ${m.message}`);
            break;
          case 'done':
            break;
          default: {
            const never: never = m;
            throw new Error(`launcher: unknown message ${JSON.stringify(never)}`);
          }
        }
      });
      exited.push(
        new Promise<void>((resolve) => {
          child.on('exit', (code, signal) => {
            outcome.exit_code = code;
            outcome.signal = signal;
            const why = this.lastLine[index]?.replace(/^error: /, '') ?? `exit status ${code ?? signal}`;
            if (!outcome.ready) failBeforeGate(index, `exited before the start gate (${code ?? signal}): ${why}`);
            else if (code !== 0 && code !== 3 && code !== 130) outcome.failure ??= `died mid-run (${code ?? signal}): ${why}`;
            resolve();
          });
          child.on('error', (err) => {
            failBeforeGate(index, `could not start: ${err.message}`);
            resolve();
          });
        }),
      );
      const cpus = this.options.cpu?.children?.[index];
      if (cpus && child.pid !== undefined) {
        const err = await pinProcess(child.pid, cpus);
        if (err) this.options.onStderr?.(index, `warning: could not pin to CPUs ${cpus.join(',')}: ${err}`);
      }
    }

    let cancelStartBound = (): void => undefined;
    const timedOut = new Promise<void>((resolve) => (cancelStartBound = this.timers.arm(this.options.start_timeout_ms, resolve)));
    await Promise.race([allReady, failedBeforeGate, timedOut]);
    cancelStartBound();
    if (readyCount < count && !startFailure) {
      const index = this.outcomes.findIndex((o) => !o.ready);
      startFailure = { index, reason: `not ready within the start timeout (${this.options.start_timeout_ms / 1000} s)` };
    }
    if (startFailure) {
      await this.stopAll(exited);
      return { start_failure: startFailure, gate_s: null, children: this.outcomes };
    }

    const gate_s = clock.now_s() + (this.options.gate_margin_ms ?? 200) / 1000;
    for (const child of this.children) child.send(encodeMessage({ kind: 'start', gate_s }));
    const cancelRunBound = this.timers.arm(this.options.run_timeout_ms, () => {
      for (const o of this.outcomes) if (o.exit_code === null && o.signal === null) o.failure ??= 'still running at the run timeout; killed';
      void this.stopAll(exited);
    });
    await Promise.all(exited);
    cancelRunBound();
    return { start_failure: null, gate_s, children: this.outcomes };
  }

  /** SIGTERM to every running child, SIGKILL to any still running after a grace period. */
  private async stopAll(exited: Array<Promise<void>>): Promise<void> {
    this.interrupt();
    const cancelGrace = this.timers.arm(KILL_GRACE_MS, () => {
      for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    await Promise.all(exited);
    cancelGrace();
  }
}
