import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const MAIN = join(__dirname, '..', 'src', 'main.ts');

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `file args` in its own process and waits for it; killed, by PID, past `bound_ms` (the error quotes its stderr). */
export function runBounded(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; bound_ms: number; label?: string }): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.label ?? file} ${args.join(' ')} did not exit within ${options.bound_ms / 1000} s${stderr ? `\n${stderr}` : ''}`));
    }, options.bound_ms);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs the probe CLI as a user would (node + tsx) in its own process; killed, by PID, past `bound_ms`. */
export function runCli(args: string[], bound_ms = 30_000): Promise<Exit> {
  return runBounded(process.execPath, ['--import', 'tsx', MAIN, ...args], { bound_ms, label: 'probe' });
}
