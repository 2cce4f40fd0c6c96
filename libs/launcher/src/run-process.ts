import { spawn, type ChildProcess } from 'node:child_process';
import { nodeFlagsFor } from './entry-module';

/** Whoever runs a script holds it here while it runs, to pass an interrupt on. */
export interface RunningProcess {
  child: ChildProcess | null;
}

/** How a script ended: its exit status (null when a signal ended it) and the last `error:` line it wrote to stderr, if any. */
export interface ScriptExit {
  code: number | null;
  error: string | null;
}

/** Bytes of the child's stderr kept, from its end: enough for its last lines. */
const STDERR_KEPT = 8192;

/**
 * Runs `node script args` (through tsx for a `.ts` script) as a fresh process, its stdout
 * discarded and the tail of its stderr kept, and resolves with how it ended: a caller that reports a
 * run that failed names why. `running.child` holds it while it runs, so a caller can pass an
 * interrupt on.
 */
export function runNodeScript(script: string, args: string[], running: RunningProcess = { child: null }): Promise<ScriptExit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeFlagsFor(script), script, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    running.child = child;
    let tail = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      tail = (tail + s).slice(-STDERR_KEPT);
    });
    child.on('close', (code) => {
      running.child = null;
      const error = tail.split('\n').filter((l) => l.startsWith('error: ')).pop() ?? null;
      resolve({ code, error });
    });
  });
}
