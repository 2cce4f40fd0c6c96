import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..', '..');

/** Whether a process is there (a zombie still is, until its parent reaps it: read its state). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** Every descendant of `pid`, from /proc (Linux). */
async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => null);
    if (stat) parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** Polls `check` every 50 ms until it holds, or fails naming `what` past `bound_ms`. */
async function within(bound_ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + bound_ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${bound_ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npx duplex-bench serve, its starter killed', () => {
  it('ends as on SIGTERM, stats written, when the npm process that started it is killed (kill $! after `npx duplex-bench serve … &`)', async () => {
    const stats = join(await mkdtemp(join(tmpdir(), 'npx-serve-')), 'mock.json');
    // What `npx duplex-bench serve … &` starts: $! is npm's process, the server a descendant of it.
    const npm = spawn('npx', ['duplex-bench', 'serve', '--port', '0', '--stats-output', stats], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (d) => (out += d));
    npm.stderr.on('data', (d) => (out += d));
    let servers: number[] = [];
    try {
      await within(45_000, `a listening line from npx duplex-bench serve (${out})`, async () => /listening on ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime\n/.test(out));
      servers = await descendants(npm.pid as number);
      expect(servers.length).toBeGreaterThan(0);
      const npmExit = new Promise((resolve) => npm.on('exit', resolve));
      process.kill(npm.pid as number, 'SIGTERM');
      await npmExit;
      // Every process npm started ends (the server among them), and the server wrote its stats as on SIGTERM.
      await within(10_000, `the end of npm's descendants ${servers.join(', ')}`, async () => !(await Promise.all(servers.map(alive))).some((a) => a));
      const written = JSON.parse(await readFile(stats, 'utf8')) as { appends: number; sessions: unknown };
      expect(written).toMatchObject({ appends: 0 });
      expect(out).toMatch(/parent process ended: 0 sessions/);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      for (const pid of servers) if (await alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
