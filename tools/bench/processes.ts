// Helpers the benchmark scripts share: a mock server as a child process, and bounded waits.
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');

/** Resolves with the exit code, or null after `bound_ms` (the child is then killed, by PID). */
export function exited(child: ChildProcess, bound_ms: number): Promise<number | null> {
  return new Promise((done) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(null);
    }, bound_ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done(code);
    });
  });
}

/** Starts `mock serve --port 0 ...args` and waits (15 s at most) for its listening line. */
export async function startMock(args: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps/mock/src/main.ts'), 'serve', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((ok, fail) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error('mock printed no listening line within 15 s'));
    }, 15_000);
    child.stdout?.on('data', (d) => {
      seen += d;
      const m = /listening on (ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
  });
  return { child, url };
}

/** SIGINT to the mock, by PID; killed if it has not exited within 10 s. */
export async function stopMock(mock: { child: ChildProcess }): Promise<void> {
  mock.child.kill('SIGINT');
  await exited(mock.child, 10_000);
}

/** Replaces (or appends) the section between `<!-- bench:NAME:start/end -->` in a markdown file's text. */
export function withSection(text: string, name: string, section: string): string {
  const start = text.indexOf(`<!-- bench:${name}:start -->`);
  const endMarker = `<!-- bench:${name}:end -->`;
  const end = text.indexOf(endMarker);
  return start >= 0 && end > start ? text.slice(0, start) + section + text.slice(end + endMarker.length) : `${text.trimEnd()}\n\n${section}\n`;
}
