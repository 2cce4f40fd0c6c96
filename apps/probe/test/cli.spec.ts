import { spawn } from 'node:child_process';
import { join } from 'node:path';

jest.setTimeout(60_000);

const MAIN = join(__dirname, '..', 'src', 'main.ts');

/** Runs the probe CLI as a user would (node + tsx), bounded in time. */
function probe(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`probe ${args.join(' ')} did not exit within 30 s`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('probe CLI, bad input', () => {
  it.each([
    [['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '0', '--duration', '1', '--output', '/tmp/x'], /^error: --concurrency must be at least 1, got 0\n$/],
    [['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '1', '--duration', '-3', '--output', '/tmp/x'], /^error: --duration must be greater than 0, got -3\n$/],
    [['run', '--url', 'ftp://127.0.0.1:9/', '--concurrency', '1', '--duration', '1', '--output', '/tmp/x'], /^error: --url must start with ws:\/\/ or wss:\/\//],
    [['launch'], /^error: unknown command "launch"/],
  ])('%j: one line on stderr, status 2, no stack', async (args, message) => {
    const { code, stderr, stdout } = await probe(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stdout).toBe('');
  });
});

describe('probe run --processes', () => {
  it('fails within the start bound, naming the child and its reason, when children cannot connect', async () => {
    const t0 = Date.now();
    const { code, stderr } = await probe(['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '2', '--processes', '2', '--duration', '5', '--output', '/tmp/duplex-bench-launch-fail', '--start-timeout-s', '20']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error: process \d failed before the start gate: cannot connect to ws:\/\/127\.0\.0\.1:9\/v1\/realtime: ECONNREFUSED/);
    expect(Date.now() - t0).toBeLessThan(25_000);
  });

  it('refuses --processes 0 and a non-integer in one line, status 2', async () => {
    for (const value of ['0', '1.5']) {
      const { code, stderr } = await probe(['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '2', '--processes', value, '--duration', '1', '--output', '/tmp/x']);
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
