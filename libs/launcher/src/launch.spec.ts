import { EventEmitter } from 'node:events';
import { execFile, fork } from 'node:child_process';
import { ManualTimers, settle } from '@duplex-bench/pacer/testing';
import { CHILD_ENV, decodeMessage, encodeMessage, type FromChild, type ToChild } from './ipc';
import { Launcher, pinProcess, type LaunchOptions } from './launch';
import { KIT_NODE_FLAGS } from './entry-module';
import type { CpuPlan } from './cpu-plan';

// The edge faked: processes. Each forked child is a FakeChild the case drives (its messages, stderr
// and exit); taskset is an execFile that answers as the case says. Real children: test/launch.spec.ts.
jest.mock('node:child_process', () => ({ fork: jest.fn(), execFile: jest.fn() }));

const forkMock = fork as unknown as jest.Mock;
const execFileMock = execFile as unknown as jest.Mock;

class FakeChild extends EventEmitter {
  readonly stderr = new EventEmitter();
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  /** What the parent sent it. */
  readonly sent: ToChild[] = [];
  /** The signals the parent sent it. */
  readonly signals: string[] = [];

  constructor(readonly pid: number | undefined) {
    super();
  }

  send(bytes: unknown): boolean {
    this.sent.push(decodeMessage<ToChild>(bytes));
    return true;
  }

  kill(signal: NodeJS.Signals): boolean {
    this.signals.push(signal);
    return true;
  }

  say(message: FromChild): void {
    this.emit('message', encodeMessage(message));
  }

  write(text: string): void {
    this.stderr.emit('data', Buffer.from(text));
  }

  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
  }
}

let children: FakeChild[];

beforeEach(() => {
  children = [];
  forkMock.mockReset().mockImplementation(() => {
    const child = new FakeChild(4000 + children.length);
    children.push(child);
    return child;
  });
  execFileMock.mockReset();
});

function launcher(count: number, extra: Partial<LaunchOptions> = {}) {
  const timers = new ManualTimers();
  const lines: Array<[number, string]> = [];
  const l = new Launcher({
    module: '/kit/libs/run/src/child.ts',
    count,
    args: (i) => ['run', '--shard', `${i}/${count}`],
    start_timeout_ms: 3000,
    run_timeout_ms: 60_000,
    timers,
    clock: timers,
    onStderr: (i, line) => lines.push([i, line]),
    ...extra,
  });
  return { l, timers, lines };
}

const ready = (c: FakeChild) => c.say({ kind: 'ready', sessions_open: 4, sessions_failed: 0 });

describe('Launcher', () => {
  it('forks each child with its arguments, its index in the environment, tsx for a .ts module, and an IPC channel', async () => {
    const spawned: Array<[number, number]> = [];
    const { l } = launcher(2, { env: { OPENAI_API_KEY: 'sk-secret', PATH: '/opt/kit/bin' }, onSpawned: (i, pid) => spawned.push([i, pid]) });
    const running = l.run();
    expect(forkMock).toHaveBeenCalledTimes(2);
    for (const [i, [module, args, options]] of forkMock.mock.calls.entries()) {
      expect(module).toBe('/kit/libs/run/src/child.ts');
      expect(args).toEqual(['run', '--shard', `${i}/2`]);
      expect(options).toMatchObject({ execArgv: [...KIT_NODE_FLAGS, '--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      // The launcher's environment, with the options' added over it.
      expect(options.env).toMatchObject({ ...process.env, OPENAI_API_KEY: 'sk-secret', PATH: '/opt/kit/bin', [CHILD_ENV]: String(i) });
    }
    expect(spawned).toEqual([
      [0, 4000],
      [1, 4001],
    ]);
    expect(l.childPids()).toEqual([4000, 4001]);
    children.forEach((c) => c.exit(1));
    await running;
  });

  it("starts a built child module with the kit's flags alone", async () => {
    const { l } = launcher(1, { module: '/kit/dist/child.js' });
    const running = l.run();
    expect(forkMock.mock.calls[0][2].execArgv).toEqual([...KIT_NODE_FLAGS]);
    children[0].exit(1);
    await running;
  });

  it('waits for every child, then gives all of them one start time: its gate margin after now, on its clock', async () => {
    const { l, timers } = launcher(3, { gate_margin_ms: 250 });
    timers.now = 7000;
    const running = l.run();
    await settle();
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([3000]);
    ready(children[0]);
    ready(children[2]);
    await settle();
    expect(l.readyChildren()).toBe(2);
    expect(children.map((c) => c.sent)).toEqual([[], [], []]);
    ready(children[1]);
    await settle();
    // The start bound is cancelled and the run bound armed.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([60_000]);
    expect(children.map((c) => c.sent)).toEqual([0, 1, 2].map(() => [{ kind: 'start', gate_s: 7.25 }]));
    children.forEach((c) => c.exit(0));
    const result = await running;
    expect(result).toEqual({
      start_failure: null,
      gate_s: 7.25,
      children: [0, 1, 2].map((index) => ({ index, pid: 4000 + index, ready: true, exit_code: 0, signal: null, failure: null })),
    });
    expect(timers.pending).toEqual([]);
    expect(children.flatMap((c) => c.signals)).toEqual([]);
  });

  it('takes 3 (pacing unqualified) and 130 (interrupted) as outcomes; any other status or a signal mid-run is a failure, with the last line the child wrote', async () => {
    const { l } = launcher(4);
    const running = l.run();
    children.forEach(ready);
    await settle();
    children[0].exit(3);
    children[1].exit(130);
    children[2].write('error: socket closed by the server\n  \n');
    children[2].exit(1);
    children[3].exit(null, 'SIGKILL');
    const result = await running;
    expect(result.start_failure).toBeNull();
    // The gate margin is 200 ms unless told.
    expect(result.gate_s).toBe(0.2);
    expect(result.children.map((c) => [c.exit_code, c.signal, c.failure])).toEqual([
      [3, null, null],
      [130, null, null],
      [1, null, 'died mid-run (1): socket closed by the server'],
      [null, 'SIGKILL', 'died mid-run (SIGKILL): exit status SIGKILL'],
    ]);
  });

  it("passes each line of a child's stderr on as it is completed, whatever the chunks", async () => {
    const { l, lines } = launcher(2);
    const running = l.run();
    children[1].write('progress 1');
    children[1].write('0%\nprogress');
    children[0].write('hello\n');
    expect(lines).toEqual([
      [1, 'progress 10%'],
      [0, 'hello'],
    ]);
    children[1].write(' 20%\n\n');
    expect(lines.slice(2)).toEqual([
      [1, 'progress 20%'],
      [1, ''],
    ]);
    children.forEach((c) => c.exit(0));
    await running;
  });

  it('fails the launch when a child exits before the gate, naming it and its last line, and stops the others by SIGTERM', async () => {
    const { l, timers } = launcher(3);
    const running = l.run();
    ready(children[0]);
    children[1].write('error: cannot connect to ws://127.0.0.1:9/v1/realtime: ECONNREFUSED\n');
    children[1].exit(1);
    await settle();
    expect(children.map((c) => c.signals)).toEqual([['SIGTERM'], [], ['SIGTERM']]);
    // The kill grace waits on its timers; both leave on SIGTERM before it is needed.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([5000]);
    children[0].exit(null, 'SIGTERM');
    children[2].exit(null, 'SIGTERM');
    const result = await running;
    expect(result.start_failure).toEqual({ index: 1, reason: 'exited before the start gate (1): cannot connect to ws://127.0.0.1:9/v1/realtime: ECONNREFUSED' });
    expect(result.gate_s).toBeNull();
    expect(children.flatMap((c) => c.sent)).toEqual([]);
    expect(timers.pending).toEqual([]);
  });

  it('says the exit status when a child that exits before the gate wrote nothing', async () => {
    const { l } = launcher(1);
    const running = l.run();
    children[0].exit(2);
    expect((await running).start_failure).toEqual({ index: 0, reason: 'exited before the start gate (2): exit status 2' });
  });

  it('fails the launch on the first failure before the gate, as the child reported it; a later one does not replace it', async () => {
    const { l } = launcher(2);
    const running = l.run();
    children[1].say({ kind: 'failed', message: 'cannot open 4 sessions: 2 refused' });
    children[0].exit(1);
    children[1].exit(null, 'SIGTERM');
    const result = await running;
    expect(result.start_failure).toEqual({ index: 1, reason: 'failed before the start gate: cannot open 4 sessions: 2 refused' });
    expect(result.children[1].failure).toBe('cannot open 4 sessions: 2 refused');
  });

  it('fails the launch when a child cannot be started', async () => {
    const { l } = launcher(2);
    const running = l.run();
    children[0].emit('error', new Error('spawn node ENOENT'));
    children[1].exit(null, 'SIGTERM');
    expect((await running).start_failure).toEqual({ index: 0, reason: 'could not start: spawn node ENOENT' });
  });

  it('gives up at the start timeout, naming the first child not ready, and kills by SIGKILL one that outlives the grace', async () => {
    const { l, timers } = launcher(3);
    const running = l.run();
    ready(children[0]);
    ready(children[2]);
    await settle();
    timers.fire();
    await settle();
    expect(children.map((c) => c.signals)).toEqual([['SIGTERM'], ['SIGTERM'], ['SIGTERM']]);
    children[0].exit(null, 'SIGTERM');
    children[2].exit(null, 'SIGTERM');
    // Child 1 ignores SIGTERM: when the grace runs out, it alone is killed.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([5000]);
    timers.fire();
    expect(children.map((c) => c.signals)).toEqual([['SIGTERM'], ['SIGTERM', 'SIGKILL'], ['SIGTERM']]);
    children[1].exit(null, 'SIGKILL');
    const result = await running;
    expect(result.start_failure).toEqual({ index: 1, reason: 'not ready within the start timeout (3 s)' });
    expect(result.gate_s).toBeNull();
  });

  it('ends a run that outlasts its bound: the children still running are told to stop and marked as killed, unless they said why before', async () => {
    const { l, timers } = launcher(3);
    const running = l.run();
    children.forEach(ready);
    await settle();
    children[0].exit(0);
    children[2].say({ kind: 'failed', message: 'server stopped answering' });
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([60_000]);
    timers.fire();
    await settle();
    expect(children.map((c) => c.signals)).toEqual([[], ['SIGTERM'], ['SIGTERM']]);
    children[1].exit(null, 'SIGTERM');
    children[2].exit(null, 'SIGTERM');
    const result = await running;
    expect(result.children.map((c) => c.failure)).toEqual([null, 'still running at the run timeout; killed', 'server stopped answering']);
    expect(result.gate_s).not.toBeNull();
  });

  it('keeps a failure a child reports after the gate on its outcome, without failing the start', async () => {
    const { l } = launcher(1);
    const running = l.run();
    ready(children[0]);
    await settle();
    children[0].say({ kind: 'failed', message: 'late fault' });
    children[0].say({ kind: 'done', exit_code: 0 });
    children[0].exit(0);
    const result = await running;
    expect(result.start_failure).toBeNull();
    expect(result.children[0].failure).toBe('late fault');
  });

  it('on interrupt, sends SIGTERM to the children still running only', async () => {
    const { l } = launcher(3);
    const running = l.run();
    children.forEach(ready);
    await settle();
    children[1].exit(0);
    l.interrupt();
    expect(children.map((c) => c.signals)).toEqual([['SIGTERM'], [], ['SIGTERM']]);
    children[0].exit(130);
    children[2].exit(130);
    expect((await running).children.map((c) => c.failure)).toEqual([null, null, null]);
  });

  it('fails loudly on a message kind it does not know', async () => {
    const { l } = launcher(1);
    const running = l.run();
    expect(() => children[0].emit('message', encodeMessage({ kind: 'bogus' } as unknown as FromChild))).toThrow('launcher: unknown message {"kind":"bogus"}');
    children[0].exit(1);
    await running;
  });

  it("pins each child to its plan's CPUs with taskset, and warns, without failing, when it cannot", async () => {
    execFileMock.mockImplementation((_file: string, args: string[], _options: unknown, done: (err: Error | null) => void) => {
      done(args.includes('4001') ? new Error('taskset: failed to set pid 4001') : null);
    });
    const cpu: CpuPlan = { mode: 'auto', cores: [[0, 4], [1, 5], [2, 6]], parent: [0, 4], children: [[1, 5], [2, 6]], warning: null };
    const { l, lines } = launcher(2, { cpu });
    const running = l.run();
    await settle();
    expect(execFileMock.mock.calls.map(([file, args]) => [file, args])).toEqual([
      ['taskset', ['-a', '-cp', '1,5', '4000']],
      ['taskset', ['-a', '-cp', '2,6', '4001']],
    ]);
    expect(lines).toEqual([[1, 'warning: could not pin to CPUs 2,6: taskset: failed to set pid 4001']]);
    children.forEach(ready);
    await settle();
    expect(children.map((c) => c.sent.length)).toEqual([1, 1]);
    children.forEach((c) => c.exit(0));
    expect((await running).start_failure).toBeNull();
  });
});

describe('pinProcess', () => {
  it('resolves with null once taskset has pinned every thread, or with its error message', async () => {
    execFileMock.mockImplementationOnce((_f: string, _a: string[], _o: unknown, done: (err: Error | null) => void) => done(null));
    await expect(pinProcess(123, [3, 7])).resolves.toBeNull();
    expect(execFileMock.mock.calls[0].slice(0, 3)).toEqual(['taskset', ['-a', '-cp', '3,7', '123'], { timeout: 5000 }]);
    execFileMock.mockImplementationOnce((_f: string, _a: string[], _o: unknown, done: (err: Error | null) => void) => done(new Error('no such process')));
    await expect(pinProcess(123, [3])).resolves.toBe('no such process');
  });
});
