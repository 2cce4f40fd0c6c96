import { readFileSync } from 'node:fs';
import { sampleThread, schedstatOf, stateOf } from './proc-sample';

// /proc is the edge: a spec scripts its files, or lets the real ones through.
jest.mock('node:fs', () => {
  const actual = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...actual, readFileSync: jest.fn(actual.readFileSync) };
});
const actualReadFileSync = jest.requireActual<typeof import('node:fs')>('node:fs').readFileSync;
const read = jest.mocked(readFileSync);

describe('stateOf', () => {
  it('reads the state letter after the command name, even a name holding parentheses and blanks', () => {
    expect(stateOf('4242 (node) S 1 4242 4242 0 -1 4194560')).toBe('S');
    expect(stateOf('4242 (my (odd) cmd) D 1 4242')).toBe('D');
    expect(stateOf('4242 (a) b) R 1 4242')).toBe('R');
  });

  it('says ? when the line has no command name or nothing after it', () => {
    expect(stateOf('')).toBe('?');
    expect(stateOf('4242 node S')).toBe('?');
    expect(stateOf('4242 (node)')).toBe('?');
  });
});

describe('schedstatOf', () => {
  it('reads the time on a CPU and the time waiting for one, ns to ms', () => {
    expect(schedstatOf('172638144 135332461 205\n')).toEqual({ run_ms: 172.638144, wait_ms: 135.332461 });
  });

  it('reads a missing field as zero', () => {
    expect(schedstatOf('5000000')).toEqual({ run_ms: 5, wait_ms: 0 });
  });
});

describe('sampleThread', () => {
  afterEach(() => {
    read.mockClear();
    read.mockImplementation(actualReadFileSync);
  });

  /** /proc as a test scripts it: each file of the thread's directory, or absent. */
  function fakeProc(pid: number, files: Partial<Record<'stat' | 'schedstat' | 'wchan', string>>) {
    const dir = `/proc/${pid}/task/${pid}/`;
    read.mockImplementation(((path: string) => {
      const name = String(path).startsWith(dir) ? (String(path).slice(dir.length) as keyof typeof files) : undefined;
      const text = name ? files[name] : undefined;
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${String(path)}`), { code: 'ENOENT' });
      return text;
    }) as typeof readFileSync);
  }

  it("reads the main thread's state, CPU and run-queue times and the kernel function it sleeps in", () => {
    fakeProc(77, { stat: '77 (node) S 1 77 77 0 -1', schedstat: '2500000000 1250000 900\n', wchan: 'ep_poll\n' });
    const s = sampleThread(77);
    expect(s).toMatchObject({ pid: 77, state: 'S', run_ms: 2500, wait_ms: 1.25, wchan: 'ep_poll' });
    // The main thread: its task has the process's own id.
    expect(read.mock.calls.map(([path]) => path)).toEqual(['/proc/77/task/77/stat', '/proc/77/task/77/schedstat', '/proc/77/task/77/wchan']);
  });

  it("gives a running thread's wchan of 0 as empty", () => {
    fakeProc(78, { stat: '78 (node) R 1', schedstat: '1 2 3', wchan: '0' });
    expect(sampleThread(78)).toMatchObject({ state: 'R', wchan: '' });
  });

  it('gives null once the process is gone, even when it goes between two reads', () => {
    fakeProc(79, {});
    expect(sampleThread(79)).toBeNull();
    fakeProc(80, { stat: '80 (node) S 1', schedstat: '1 2 3' });
    expect(sampleThread(80)).toBeNull();
  });

  it('takes its time on the monotonic clock, in seconds', () => {
    const before_s = Number(process.hrtime.bigint()) / 1e9;
    const s = sampleThread(process.pid);
    const after_s = Number(process.hrtime.bigint()) / 1e9;
    if (!s) throw new Error('no sample of this process');
    expect(s.t_s).toBeGreaterThanOrEqual(before_s);
    expect(s.t_s).toBeLessThanOrEqual(after_s);
  });

  it('reads this very process on Linux: running while it looks at itself, with CPU time spent', () => {
    const s = sampleThread(process.pid);
    expect(s).toMatchObject({ pid: process.pid, state: 'R', wchan: '' });
    expect(s?.run_ms).toBeGreaterThan(0);
  });

  it('gives null for a process id the kernel never hands out', () => {
    const pid_max = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1'));
    expect(sampleThread(pid_max)).toBeNull();
  });
});
