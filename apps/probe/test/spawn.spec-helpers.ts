import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const MAIN = join(__dirname, '..', 'src', 'main.ts');

/** Runs the probe CLI as a user would (node + tsx) in its own process; killed, by PID, past `bound_ms`. */
export function runCli(args: string[], bound_ms = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`probe ${args.join(' ')} did not exit within ${bound_ms / 1000} s`));
    }, bound_ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
