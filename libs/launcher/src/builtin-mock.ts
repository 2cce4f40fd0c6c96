import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { entryModule, nodeFlagsFor } from './entry-module';

/** The kit's `serve`: dist/duplex-bench.js when built, apps/mock/src/main.ts from the sources. */
const SERVE = entryModule(join(__dirname, '..', '..', '..', 'apps', 'mock', 'src'), 'main', 'duplex-bench');

/** Bytes of the mock's stderr kept, from its end: its last lines, for a mock that did not start. */
const STDERR_KEPT = 4096;

/** The built-in mock, serving on a free port of 127.0.0.1 for one run. */
export interface BuiltinMock {
  url: string;
  pid: number;
  /** Ends it as on SIGTERM (it writes its stats), and waits, at most `bound_ms`, then kills it. */
  stop(bound_ms?: number): Promise<void>;
}

/**
 * Starts `duplex-bench serve --port 0 …args` as a child process and resolves once it listens, with
 * its URL. A mock that exits first, or says nothing within `bound_ms`, rejects with its last error
 * line. The mock ends by itself when this process does (it watches its parent).
 */
export function startBuiltinMock(args: string[], bound_ms = 30_000): Promise<BuiltinMock> {
  const child = spawn(process.execPath, [...nodeFlagsFor(SERVE), SERVE, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-STDERR_KEPT)));
  const why = () => stderr.split('\n').filter((l) => l.startsWith('error: ')).pop()?.slice(7) ?? (stderr.trim().split('\n').pop() || 'no message');
  const stop = async (stop_bound_ms = 5000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), stop_bound_ms)));
    if ((await Promise.race([exited, late])) === 'late') child.kill('SIGKILL');
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the built-in mock did not listen within ${bound_ms / 1000} s (${why()})`));
    }, bound_ms);
    child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /listening on (ws:\/\/\S+)\n/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.resume();
      resolve({ url: m[1], pid: child.pid as number, stop });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the built-in mock exited (${signal ?? code}) before it listened: ${why()}`));
    });
  });
}
