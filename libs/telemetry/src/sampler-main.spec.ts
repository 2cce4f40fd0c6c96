import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

// The sampler is a process of its own (`--sampler`): each case runs it as the kit ships it, bundled
// by esbuild into one CommonJS file (as tools/build.ts builds dist/sampler.js; plain node starts it
// in a tenth of the time tsx takes), and reads the file it wrote.
const ROOT = join(__dirname, '..', '..', '..');
/** Bound on a case that starts processes: the host's two cores are shared. */
const PROCESS_CASE_MS = 20_000;
const USAGE = 'error: sampler: --pids P[,P…] --out FILE [--interval-ms 5] [--max-s S]';

type Look = [t_s: number, pid: number, state: string, run_ms: number, wait_ms: number, wchan: string];
interface Footer {
  sampler: { pids: number[]; interval_ms: number; looks: number; late_looks: number; wall_s: number; cpu_s: number; cpu_cores: number | null; ended_by: string };
}

const monotonic_s = () => Number(process.hrtime.bigint()) / 1e9;
const pidMax = () => Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1'));

describe('the sampler process', () => {
  const started: ChildProcess[] = [];
  const orphans: number[] = [];
  const watchers: FSWatcher[] = [];
  let dir: string;
  let bundle: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sampler-spec-'));
    bundle = join(dir, 'sampler.js');
    buildSync({ absWorkingDir: ROOT, entryPoints: [join(__dirname, 'sampler-main.ts')], outfile: bundle, bundle: true, platform: 'node', target: 'node20', format: 'cjs', tsconfig: join(ROOT, 'tsconfig.base.json'), logLevel: 'error' });
  });
  afterEach(() => {
    for (const watcher of watchers.splice(0)) watcher.close();
    for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of orphans.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function sampler(args: string[]) {
    const child = spawn(process.execPath, [bundle, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
    return { child, exit };
  }

  /** Resolves once `file` (created empty here) holds what `ready` wants, woken by the file's own change events. */
  function once(file: string, ready: (text: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      const watcher = watch(file, () => check());
      watchers.push(watcher);
      const check = () => {
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (err) {
          watcher.close();
          reject(err);
          return;
        }
        if (ready(text)) {
          watcher.close();
          resolve(text);
        }
      };
      check();
    });
  }

  function read(file: string): { looks: Look[]; footer: Footer['sampler'] } {
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Look | Footer);
    const last = lines.pop();
    if (!last || Array.isArray(last)) throw new Error('no footer');
    return { looks: lines as Look[], footer: last.sampler };
  }

  it('refuses to start without a probe process or a file, or with no interval, and says how to call it', async () => {
    const out = join(dir, 'usage.jsonl');
    const results = await Promise.all([sampler(['--pids', '0,abc', '--out', out]).exit, sampler(['--pids', '1', '--out', out, '--interval-ms', '0']).exit]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(USAGE);
    }
    expect(() => readFileSync(out)).toThrow(/ENOENT/);
  }, PROCESS_CASE_MS);

  it('ends on its own, with its account as the last line, once no probe process is left', async () => {
    const out = join(dir, 'gone.jsonl');
    const gone = pidMax(); // a process id the kernel never hands out
    const r = await sampler(['--pids', String(gone), '--out', out]).exit;
    expect(r.code).toBe(0);
    const { looks, footer } = read(out);
    expect(looks).toEqual([]);
    expect(footer).toMatchObject({ pids: [gone], interval_ms: 5, looks: 0, late_looks: 0, ended_by: 'every probe process ended' });
  }, PROCESS_CASE_MS);

  it("looks at the probe's main thread on the monotonic clock, ignores SIGINT, and ends on SIGTERM with its account", async () => {
    const out = join(dir, 'live.jsonl');
    writeFileSync(out, '');
    const t0_s = monotonic_s();
    const s = sampler(['--pids', String(process.pid), '--out', out, '--interval-ms', '2']);
    // Looks are flushed at least every 100 ms: the first flush says the sampler runs (its handlers are set).
    await once(out, (text) => text.includes('\n'));
    // A Ctrl-C reaches the whole group; the sampler must outlive it (the probe still drains).
    s.child.kill('SIGINT');
    s.child.kill('SIGTERM');
    const r = await s.exit;
    const t1_s = monotonic_s();
    expect([r.code, r.signal]).toEqual([0, null]);
    const { looks, footer } = read(out);
    expect(footer).toMatchObject({ pids: [process.pid], interval_ms: 2, ended_by: 'SIGTERM' });
    expect(footer.looks).toBe(looks.length);
    expect(looks.length).toBeGreaterThan(0);
    for (const [t_s, pid, state, run_ms, wait_ms, wchan] of looks) {
      expect([pid, typeof state, typeof wchan]).toEqual([process.pid, 'string', 'string']);
      expect(state).toMatch(/^[A-Za-z]$/);
      expect(t_s).toBeGreaterThanOrEqual(t0_s);
      expect(t_s).toBeLessThanOrEqual(t1_s);
      expect(run_ms).toBeGreaterThan(0);
      expect(wait_ms).toBeGreaterThanOrEqual(0);
    }
    // Times and cumulative CPU only go forward.
    for (let i = 1; i < looks.length; i++) {
      expect(looks[i][0]).toBeGreaterThan(looks[i - 1][0]);
      expect(looks[i][3]).toBeGreaterThanOrEqual(looks[i - 1][3]);
    }
    expect(footer.wall_s).toBeGreaterThan(0);
    expect(footer.wall_s).toBeLessThanOrEqual(t1_s - t0_s);
    expect(footer.late_looks).toBeGreaterThanOrEqual(0);
  }, PROCESS_CASE_MS);

  it('ends on its own after --max-s', async () => {
    const out = join(dir, 'max.jsonl');
    const r = await sampler(['--pids', String(process.pid), '--out', out, '--max-s', '0.15']).exit;
    expect(r.code).toBe(0);
    const { looks, footer } = read(out);
    expect(footer.ended_by).toBe('--max-s');
    expect(footer.wall_s).toBeGreaterThanOrEqual(0.15);
    expect(looks.length).toBe(footer.looks);
    expect(looks.length).toBeGreaterThan(0);
  }, PROCESS_CASE_MS);

  it('ends on its own when its parent is gone', async () => {
    const out = join(dir, 'orphan.jsonl');
    writeFileSync(out, '');
    // A shell starts the sampler, says its pid, and waits on its stdin: closing that ends the shell, the sampler's parent.
    const command = `"$0" "$1" --pids "$2" --out "$3" --max-s 20 </dev/null >/dev/null 2>&1 & echo $!; read _`;
    const shell = spawn('/bin/sh', ['-c', command, process.execPath, bundle, String(process.pid), out], { stdio: ['pipe', 'pipe', 'ignore'] });
    started.push(shell);
    const pid = await new Promise<number>((resolve) => shell.stdout?.setEncoding('utf8').once('data', (s: string) => resolve(Number(s.trim()))));
    orphans.push(pid);
    await once(out, (text) => text.includes('\n'));
    shell.stdin?.end();
    const text = await once(out, (t) => t.includes('"sampler"'));
    expect(text.trim().split('\n').pop()).toContain('"ended_by":"its parent ended"');
  }, PROCESS_CASE_MS);
});
