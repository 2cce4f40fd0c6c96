import { spawn, type ChildProcess } from 'node:child_process';
import { nodeFlagsFor } from './entry-module';

/**
 * Runs `node script args` (through tsx for a `.ts` script) as a fresh process, its output
 * discarded, and resolves with its exit status (null when a signal ended it). `running.child` holds
 * it while it runs, so a caller can pass an interrupt on.
 */
/** Whoever runs a script holds it here while it runs, to pass an interrupt on. */
export interface RunningProcess {
  child: ChildProcess | null;
}

export function runNodeScript(script: string, args: string[], running: RunningProcess = { child: null }): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeFlagsFor(script), script, ...args], { stdio: 'ignore' });
    running.child = child;
    child.on('exit', (code) => {
      running.child = null;
      resolve(code);
    });
  });
}
