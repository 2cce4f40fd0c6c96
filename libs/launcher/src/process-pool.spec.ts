import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import { ProcessPool, type ProcessPoolOptions } from './process-pool';

jest.setTimeout(30_000);

/**
 * The worker module the pool starts: the real `serveTasks` with a handler each case steers by its task.
 * `slow` answers after `ms` of the worker's own time with the most tasks it held at once. On SIGTERM
 * it leaves a mark beside itself and exits, or (`ignore`) carries on.
 */
const workerModule = (onSigterm: 'leave' | 'ignore') => `
import { writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { serveTasks } from ${JSON.stringify(join(__dirname, 'process-pool.ts'))};

type Task = { op: 'echo'; value: unknown } | { op: 'fail'; message: string } | { op: 'exit'; code: number } | { op: 'hang' } | { op: 'pid' } | { op: 'slow'; ms: number; n: number };

process.on('SIGTERM', () => {
  ${onSigterm === 'leave' ? "writeFileSync(join(dirname(process.argv[1]), `sigterm-${process.pid}`), '');\n  process.exit(0);" : ''}
});

let active = 0;
let mostActive = 0;
serveTasks(async (t) => {
  const task = t as Task;
  switch (task.op) {
    case 'echo':
      return task.value;
    case 'fail':
      throw new Error(task.message);
    case 'exit':
      process.exit(task.code);
    case 'hang':
      return new Promise(() => setInterval(() => undefined, 1000));
    case 'pid':
      return { pid: process.pid, nice: getPriority() };
    case 'slow':
      active++;
      mostActive = Math.max(mostActive, active);
      await new Promise((resolve) => setTimeout(resolve, task.ms));
      active--;
      return { n: task.n, most_active: mostActive };
  }
});
`;

type Answer = { pid: number; nice: number };

describe('ProcessPool.sizeFor', () => {
  it('gives the recorder a quarter of the CPUs, at least 1 and at most 4', () => {
    expect([1, 4, 7, 8, 12, 15, 16, 17, 64].map((cpus) => ProcessPool.sizeFor(cpus))).toEqual([1, 1, 1, 2, 3, 3, 4, 4, 4]);
  });
});

describe('ProcessPool', () => {
  let dir: string;
  let module: string;
  let pool: ProcessPool | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'process-pool-'));
    module = join(dir, 'worker.ts');
    await writeFile(module, workerModule('leave'));
  });
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const start = (options: Partial<ProcessPoolOptions> = {}): ProcessPool => (pool = new ProcessPool({ module, size: 1, ...options }));

  it("answers each task with its handler's result or error, from worker processes at the nice asked for, a task a worker at a time", async () => {
    const p = start({ size: 2, nice: 7 });
    expect(p.size).toBe(2);
    await expect(p.run({ op: 'echo', value: { figures: [1.5, 2], name: 'ttfp' } })).resolves.toEqual({ figures: [1.5, 2], name: 'ttfp' });
    await expect(p.run({ op: 'fail', message: 'no trace for s1' })).rejects.toThrow('no trace for s1');
    await expect(p.run({ op: 'echo', value: 'after a failure' })).resolves.toBe('after a failure');

    // Side by side in separate processes, at the nice value asked for, one task a worker at a time.
    const answers = await Promise.all([p.run<Answer>({ op: 'pid' }), p.run<Answer>({ op: 'pid' })]);
    expect(new Set(answers.map((a) => a.pid)).size).toBe(2);
    expect(answers.map((a) => a.pid)).not.toContain(process.pid);
    if (process.platform === 'linux') expect(answers.map((a) => a.nice)).toEqual([7, 7]);
    // Five tasks on two workers: the others wait their turn, each answered as its own.
    const slow = await Promise.all([1, 2, 3, 4, 5].map((n) => p.run<{ n: number; most_active: number }>({ op: 'slow', ms: 30, n })));
    expect(slow).toEqual([1, 2, 3, 4, 5].map((n) => ({ n, most_active: 1 })));
  });

  it('fails the task of a worker that dies, naming it, and starts another in its place', async () => {
    const p = start();
    const { pid } = await p.run<Answer>({ op: 'pid' });
    await expect(p.run({ op: 'exit', code: 3 })).rejects.toThrow(`post-processing worker ${pid} died (3)`);
    const next = await p.run<Answer>({ op: 'pid' });
    expect(next.pid).not.toBe(pid);
    expect(p.size).toBe(1);
  });

  it('bounds a task on its timers: past the bound the task fails and its worker is killed and replaced', async () => {
    const timers = new ManualTimers();
    const p = start({ timers, task_timeout_ms: 5000 });
    const { pid } = await p.run<Answer>({ op: 'pid' });
    // Each answered task cancelled its bound.
    expect(timers.pending).toEqual([]);
    const hung = p.run({ op: 'hang' });
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([5000]);
    timers.fire();
    await expect(hung).rejects.toThrow(/^post-processing task \d+ took over 5000 ms$/);
    const next = await p.run<Answer>({ op: 'pid' });
    expect(next.pid).not.toBe(pid);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  it('on close, rejects the tasks running and queued, stops every worker on SIGTERM, and refuses later tasks', async () => {
    const timers = new ManualTimers();
    const p = start({ timers });
    const { pid, nice } = await p.run<Answer>({ op: 'pid' });
    // Unless told, a worker runs at nice 10, below the recorder.
    if (process.platform === 'linux') expect(nice).toBe(10);
    const running = p.run({ op: 'hang' });
    const queued = p.run({ op: 'echo', value: 1 });
    const closed = p.close();
    await expect(running).rejects.toThrow(/^process pool closed before task \d+ finished$/);
    await expect(queued).rejects.toThrow(/^process pool closed before task \d+ finished$/);
    // The kill grace is armed, and cancelled once the worker has left on SIGTERM.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([2000]);
    await closed;
    expect(timers.pending).toEqual([]);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    await expect(access(join(dir, `sigterm-${pid}`))).resolves.toBeUndefined();
    await expect(p.run({ op: 'echo', value: 2 })).rejects.toThrow('process pool is closed');
  });

  it('kills a worker that ignores SIGTERM once the grace runs out', async () => {
    const timers = new ManualTimers();
    const stubborn = join(dir, 'stubborn.ts');
    await writeFile(stubborn, workerModule('ignore'));
    const p = (pool = new ProcessPool({ module: stubborn, size: 1, timers }));
    const { pid } = await p.run<Answer>({ op: 'pid' });
    const closed = p.close();
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([2000]);
    timers.fire();
    // A stated bound, should the grace not kill it: the worker is ended all the same, and the case fails.
    let outlived = false;
    const bound = setTimeout(() => {
      outlived = true;
      process.kill(pid, 'SIGKILL');
    }, 10_000);
    await closed.finally(() => clearTimeout(bound));
    expect(outlived).toBe(false);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
