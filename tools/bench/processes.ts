// The one process helper of the benchmark scripts: children started here and tracked by PID (only
// ours are ever signalled), bounded waits, a mock server as a child process, its CPU from /proc.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
/** Every benchmark's traffic stays on this address. */
export const HOST = '127.0.0.1';
const MOCK_START_TIMEOUT_S = 15;
const MOCK_STOP_TIMEOUT_S = 10;
const KILL_WAIT_S = 5;

/** A command's trimmed stdout, or undefined when it fails or takes over 10 s. */
export function runQuiet(file: string, args: string[]): string | undefined {
  try {
    return execFileSync(file, args, { cwd: ROOT, timeout: 10_000, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

export type Role = 'mock' | 'client';

/** Children started here and still running. They get their own process group (detached), so a
 * terminal Ctrl-C reaches only this script, which then decides what each child is sent. */
export const liveChildren = new Map<ChildProcess, Role>();

export interface Exit {
  code: number | null;
  signal: string | null;
}

/** `cwd` matters for a checkout other than this one: tsx resolves `@duplex-bench/*` through the tsconfig of its working directory. */
export function spawnTracked(role: Role, file: string, args: string[], stdout: 'pipe' | number, stderr: number, cwd = ROOT): ChildProcess {
  const child = spawn(file, args, { cwd, stdio: ['ignore', stdout, stderr], detached: true });
  liveChildren.set(child, role);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

/** Resolves with the exit, or null if the child is still running after timeout_s. */
export function waitForExit(child: ChildProcess, timeout_s: number): Promise<Exit | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(null);
    }, timeout_s * 1000);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      resolve({ code, signal });
    };
    child.once('exit', onExit);
  });
}

export function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(child.pid, signal);
  } catch {
    // Already gone.
  }
}

export async function killChild(child: ChildProcess): Promise<Exit | null> {
  signalChild(child, 'SIGKILL');
  return waitForExit(child, KILL_WAIT_S);
}

export function openLog(file: string): number {
  return fs.openSync(file, 'w');
}

export const CLOCK_TICKS_PER_S = Number(runQuiet('getconf', ['CLK_TCK']) ?? 100) || 100;

/**
 * A process's /proc/<pid>/stat: its name (the command, in parentheses there) and the fields after it,
 * `fields[0]` being field 3 (state) as proc(5) numbers them; null when it cannot be read (gone).
 */
export function readStat(pid: number | string): { name: string; fields: string[] } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
  } catch {
    return null;
  }
}

/** Two fields of /proc/<pid>/stat (numbered from 1, as proc(5) does) added, in CPU seconds; null when the process is gone. */
function statSeconds(pid: number | 'self' | undefined, a: number, b: number): number | null {
  const stat = pid === undefined ? null : readStat(pid);
  return stat === null ? null : (Number(stat.fields[a - 3]) + Number(stat.fields[b - 3])) / CLOCK_TICKS_PER_S;
}

/** User + system CPU seconds of a live child (utime, stime); null when unreadable. */
export function procCpuSeconds(child: ChildProcess): number | null {
  return statSeconds(child.pid, 14, 15);
}

/**
 * User + system CPU seconds of this process's children that have ended and been reaped (cutime,
 * cstime): the difference across one child's life is that child's whole CPU, start-up to exit,
 * counted by the kernel the same way for every client. Null when unreadable.
 */
export function reapedChildrenCpuSeconds(): number | null {
  return statSeconds('self', 16, 17);
}

/** User + system + irq CPU seconds of the whole host, and the seconds the hypervisor took (steal), from /proc/stat's first line. */
export function hostCpuSeconds(): { busy: number; steal: number } {
  const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: (user + nice + system + irq + softirq) / CLOCK_TICKS_PER_S, steal: steal / CLOCK_TICKS_PER_S };
}

export interface Mock {
  child: ChildProcess;
  url: string;
  stats_file: string;
}

/** The realtime mock's listening line; the HTTP stub's is `HTTP_LISTENING`. */
const WS_LISTENING = /listening on (ws:\/\/([^:/\s]+):\d+\/v1\/realtime)/;
export const HTTP_LISTENING = /listening on (http:\/\/([^:/\s]+):\d+)/;

/** Waits for the mock's "listening on URL" line, bounded. */
function awaitListening(child: ChildProcess, log_fd: number, listening: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => done(new Error(`mock printed no "listening" line within ${MOCK_START_TIMEOUT_S} s`)), MOCK_START_TIMEOUT_S * 1000);
    const onExit = (code: number | null, signal: string | null) => done(new Error(`mock exited before listening (code ${code}, signal ${signal})`));
    const onData = (chunk: Buffer) => {
      fs.writeSync(log_fd, chunk);
      seen += chunk.toString('utf8');
      const match = listening.exec(seen);
      if (match && match[2] !== HOST) done(new Error(`mock listens on ${match[2]}, not ${HOST}`));
      else if (match) done(undefined, match[1]);
    };
    function done(err: Error | undefined, url?: string) {
      clearTimeout(timer);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(url as string);
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * Starts `mock serve --port 0 ...args` of the checkout at `root` (default: this one), its logs and
 * stats in `dir`, and waits (bounded) for its listening line.
 */
/**
 * How a checkout's command is started: its compiled kit (`dist/duplex-bench.js`, what the
 * executable and the image run) when it has one, else its TypeScript `source` through tsx (a
 * checkout of a commit from before the kit).
 */
export function entryOf(root: string, source: string): string[] {
  const built = path.join(root, 'dist', 'duplex-bench.js');
  return [...kitFlagsOf(root), ...(fs.existsSync(built) ? [built] : ['--import', 'tsx', path.join(root, source)])];
}

/**
 * The Node flags a checkout's executable starts with (its first line, `#!/usr/bin/env -S node
 * FLAGS`), so each build runs as its users run it; none for a checkout from before it had any.
 */
export function kitFlagsOf(root: string): string[] {
  const bin = path.join(root, 'bin', 'duplex-bench.js');
  if (!fs.existsSync(bin)) return [];
  const first = fs.readFileSync(bin, 'utf8').split('\n')[0];
  const m = /^#!\/usr\/bin\/env -S node\s+(.*)$/.exec(first);
  return m ? m[1].trim().split(/\s+/) : [];
}

export async function startMock(dir: string, args: string[] = [], root = ROOT, listening = WS_LISTENING): Promise<Mock> {
  const stats_file = path.join(dir, 'mock-stats.json');
  const stdout_fd = openLog(path.join(dir, 'mock.stdout.log'));
  const stderr_fd = openLog(path.join(dir, 'mock.stderr.log'));
  const argv = [...entryOf(root, 'apps/mock/src/main.ts'), 'serve', ...args, '--host', HOST, '--port', '0', '--stats-output', stats_file];
  const child = spawnTracked('mock', process.execPath, argv, 'pipe', stderr_fd, root);
  fs.closeSync(stderr_fd);
  child.stdout?.once('close', () => fs.closeSync(stdout_fd));
  try {
    return { child, url: await awaitListening(child, stdout_fd, listening), stats_file };
  } catch (err) {
    await killChild(child);
    throw err;
  }
}

/** SIGINT, bounded wait, then SIGKILL. Returns a note when the stop was not clean. */
export async function stopMock(mock: Mock): Promise<string | undefined> {
  signalChild(mock.child, 'SIGINT');
  const exit = await waitForExit(mock.child, MOCK_STOP_TIMEOUT_S);
  if (exit === null) {
    await killChild(mock.child);
    return `mock did not exit within ${MOCK_STOP_TIMEOUT_S} s of SIGINT; killed`;
  }
  if (exit.code !== 0) return `mock exited with code ${exit.code} signal ${exit.signal}`;
  return undefined;
}

/** Resolves with the exit code, or null after `bound_ms` (the child is then killed, by PID). */
export async function exited(child: ChildProcess, bound_ms: number): Promise<number | null> {
  const exit = await waitForExit(child, bound_ms / 1000);
  if (exit) return exit.code;
  await killChild(child);
  return null;
}

/**
 * On SIGINT/SIGTERM, `onInterrupt` runs once (a script stops starting runs and interrupts its
 * client); if the script exits anyway, the children still running are killed.
 */
export function installInterrupts(onInterrupt: () => void): void {
  let done = false;
  const on = () => {
    if (done) return;
    done = true;
    onInterrupt();
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  process.on('exit', () => {
    for (const child of liveChildren.keys()) signalChild(child, 'SIGKILL');
  });
}
