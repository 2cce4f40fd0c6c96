import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';
import { nodeFlagsFor } from './entry-module';
import { Packr } from 'msgpackr';

const packr = /* @__PURE__ */ new Packr(); // pure: a bundle drops it (and msgpackr) where it is unused

type ToWorker = { kind: 'task'; id: number; task: unknown };
type FromWorker = { kind: 'result'; id: number; ok: true; result: unknown } | { kind: 'result'; id: number; ok: false; error: string };

export interface ProcessPoolOptions {
  /** The worker module; it calls `serveTasks` with its handler. */
  module: string;
  size: number;
  /** Nice value of every worker (Linux/macOS), so it yields to the recording process. */
  nice?: number;
  /** Bound on one task. */
  task_timeout_ms?: number;
  /** The timers of the task bound and the kill grace (default: real ones). */
  timers?: TimerHost;
}

interface Worker {
  child: ChildProcess;
  busy: boolean;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  cancelTimer(): void;
  worker: Worker;
}

/**
 * A few child processes for heavy post-processing, started up front at a lower priority. Tasks and
 * results are small msgpackr messages; the caller's loop only sends and receives them.
 */
export class ProcessPool {
  private readonly workers: Worker[] = [];
  private readonly queue: Array<{ id: number; task: unknown }> = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;

  private readonly timers: TimerHost;

  constructor(private readonly options: ProcessPoolOptions) {
    this.timers = options.timers ?? nodeTimerHost;
    for (let i = 0; i < options.size; i++) this.workers.push(this.startWorker());
  }

  /** Sizes a pool as the recorder wants it: at most 4 workers and a quarter of the CPUs, at least 1. */
  static sizeFor(cpus: number): number {
    return Math.max(1, Math.min(4, Math.floor(cpus / 4)));
  }

  get size(): number {
    return this.workers.length;
  }

  run<R>(task: unknown): Promise<R> {
    if (this.closed) return Promise.reject(new Error('process pool is closed'));
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ id, task });
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, cancelTimer: () => undefined, worker: undefined as unknown as Worker });
      this.dispatch();
    });
  }

  /** Stops every worker, by PID; tasks still queued or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [id, p] of this.pending) {
      p.cancelTimer();
      p.reject(new Error(`process pool closed before task ${id} finished`));
    }
    this.pending.clear();
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve();
            const cancelKill = this.timers.arm(2000, () => w.child.kill('SIGKILL'));
            w.child.once('exit', () => {
              cancelKill();
              resolve();
            });
            w.child.kill('SIGTERM');
          }),
      ),
    );
  }

  private startWorker(): Worker {
    const child = fork(this.options.module, [], {
      execArgv: nodeFlagsFor(this.options.module),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, this.options.nice ?? 10);
      } catch {
        // not permitted here: the workers run at the recorder's priority
      }
    }
    const worker: Worker = { child, busy: false };
    child.on('message', (bytes: unknown) => this.onResult(worker, packr.unpack(bytes as Uint8Array) as FromWorker));
    child.on('exit', (code, signal) => {
      if (this.closed) return;
      for (const [id, p] of this.pending) {
        if (p.worker !== worker) continue;
        p.cancelTimer();
        this.pending.delete(id);
        p.reject(new Error(`post-processing worker ${child.pid} died (${code ?? signal})`));
      }
      const index = this.workers.indexOf(worker);
      if (index >= 0) this.workers[index] = this.startWorker();
      this.dispatch();
    });
    return worker;
  }

  private dispatch(): void {
    for (const worker of this.workers) {
      if (worker.busy || this.queue.length === 0) continue;
      const { id, task } = this.queue.shift() as { id: number; task: unknown };
      const p = this.pending.get(id);
      if (!p) continue;
      worker.busy = true;
      p.worker = worker;
      p.cancelTimer = this.timers.arm(this.options.task_timeout_ms ?? 120_000, () => {
        this.pending.delete(id);
        p.reject(new Error(`post-processing task ${id} took over ${this.options.task_timeout_ms} ms`));
        worker.child.kill('SIGKILL'); // replaced on exit
      });
      const message: ToWorker = { kind: 'task', id, task };
      worker.child.send(packr.pack(message));
    }
  }

  private onResult(worker: Worker, m: FromWorker): void {
    worker.busy = false;
    const p = this.pending.get(m.id);
    if (p) {
      this.pending.delete(m.id);
      p.cancelTimer();
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(m.error));
    }
    this.dispatch();
  }
}

/** The worker side: answers each task with `handler`'s result (or its error message). */
export function serveTasks(handler: (task: unknown) => Promise<unknown>): void {
  process.on('message', (bytes: unknown) => {
    const m = packr.unpack(bytes as Uint8Array) as ToWorker;
    handler(m.task).then(
      (result) => process.send?.(packr.pack({ kind: 'result', id: m.id, ok: true, result } satisfies FromWorker)),
      (err: Error) => process.send?.(packr.pack({ kind: 'result', id: m.id, ok: false, error: err.message } satisfies FromWorker)),
    );
  });
}
