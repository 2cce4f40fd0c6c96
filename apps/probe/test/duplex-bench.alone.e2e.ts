import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flagsOf } from '@duplex-bench/cli';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { DUPLEX_BENCH } from '../src/duplex-bench';

// The exit codes as scripts see them, a qualified run (exit 0, QUALIFIED last) among them: run
// alone, with no other test file beside them (jest.e2e-alone.config.ts).
jest.setTimeout(90_000);

/** The executable a user runs (`npx duplex-bench`, the package's bin). */
const BIN = join(__dirname, '..', '..', '..', 'bin', 'duplex-bench.js');

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `duplex-bench args`, bounded in time; `during` may act on the child while it runs. */
function duplexBench(args: string[], during?: (child: ChildProcess, stderr: () => string) => void, node_flags: string[] = []): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...node_flags, BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`duplex-bench ${args.join(' ')} did not exit within 60 s`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    during?.(child, () => stderr);
  });
}

describe('duplex-bench, the executable', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  const run = (dir: string, ...more: string[]) => ['run', '--url', mock.url, '--concurrency', '2', '--duration', '1', '--output', dir, ...more];

  it.each(['run', 'record', 'merge', 'check', 'serve'])('%s --help lists every flag with its group and exits 0', async (command) => {
    const { code, stdout, stderr } = await duplexBench([command, '--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(new RegExp(`^Usage: duplex-bench ${command} `));
    expect(stdout).toMatch(/\nOutput:\n/);
    const spec = DUPLEX_BENCH.commands.find((c) => c.name === command);
    for (const flag of Object.keys(flagsOf(spec as NonNullable<typeof spec>))) expect(stdout).toMatch(new RegExp(`\\n  --${flag}\\b`));
  });

  it('--help lists the commands, --version prints the version, both exit 0', async () => {
    const help = await duplexBench(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['run', 'record', 'merge', 'check', 'serve']) expect(help.stdout).toMatch(new RegExp(`\\n  ${command} `));
    const version = await duplexBench(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`${JSON.parse(await readFile(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')).version}\n`);
  });

  it('exits 0 after a qualified run; with --json the last stdout line is the summary, the human lines on stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'db-ok-'));
    const { code, stdout, stderr } = await duplexBench(run(dir, '--json'));
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]);
    expect(summary).toEqual(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')));
    expect(summary).toMatchObject({ qualified: true, verdict: 'qualified' });
    expect(stderr.trim().split('\n').pop()).toMatch(/^QUALIFIED: /);
  });

  it('exits 1 when the server cannot be reached, in one line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'db-fail-'));
    const { code, stderr } = await duplexBench(['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '1', '--duration', '1', '--output', dir]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: cannot connect to ws:\/\/127\.0\.0\.1:9\/v1\/realtime/);
  });

  it('exits 2 on bad input, in one line naming the flag', async () => {
    const { code, stdout, stderr } = await duplexBench(['run', '--processes', '0', '--url', mock.url, '--concurrency', '1', '--duration', '1', '--output', '/tmp/x']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('error: --processes must be at least 1, got 0\n');
    const unknown = await duplexBench(['run', '--bogus']);
    expect([unknown.code, unknown.stderr]).toEqual([2, 'error: unknown flag --bogus\n']);
  });

  it('exits 3 when the client missed its cadence (a stall of its own loop)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'db-unq-'));
    const { code, stdout } = await duplexBench(run(dir, '--inject-stall-ms', '300', '--start-spread-ms', '0'));
    expect(code).toBe(3);
    expect(stdout).toContain('UNQUALIFIED');
  });

  it('exits 1 when the server refuses every session, and says FAILED on the last human line and in the JSON, never QUALIFIED; so does merge of that run', async () => {
    const refusing = await startMockServer({ port: 0, max_sessions: 0 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'db-refused-'));
      const args = ['run', '--url', refusing.url, '--concurrency', '2', '--duration', '1', '--output', dir];
      const plain = await duplexBench(args);
      expect(plain.code).toBe(1);
      expect(plain.stdout.trim().split('\n').pop()).toBe('FAILED: no session completed (2 admission_refused)');
      expect(plain.stdout).not.toMatch(/QUALIFIED/);
      expect(plain.stderr).toContain('error: no session completed (admission_refused)');
      // With --json the human lines are on stderr, the verdict still last; the summary says it for scripts.
      const json = await duplexBench([...args, '--json']);
      expect(json.code).toBe(1);
      expect(json.stderr.trim().split('\n').pop()).toBe('FAILED: no session completed (2 admission_refused)');
      const summary = JSON.parse(json.stdout.trim());
      expect(summary).toMatchObject({ verdict: 'failed', failed_reason: 'no session completed (2 admission_refused)', sessions: { completed: 0 } });
      expect(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'))).toEqual(summary);
      const merged = await duplexBench(['merge', dir, '--output', join(dir, 'merged'), '--json']);
      expect(merged.code).toBe(1);
      expect(merged.stderr.trim().split('\n').pop()).toBe('FAILED: no session completed (2 admission_refused)');
      expect(JSON.parse(merged.stdout.trim())).toMatchObject({ verdict: 'failed' });
    } finally {
      await refusing.close();
    }
  });

  it('exits 130 when interrupted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'db-int-'));
    const { code } = await duplexBench(['run', '--url', mock.url, '--concurrency', '2', '--duration', '30', '--output', dir], (child, stderr) => {
      // Interrupt once the sessions stream.
      const poll = setInterval(() => {
        if (stderr().includes('streaming:')) {
          clearInterval(poll);
          child.kill('SIGINT');
        }
      }, 20);
      child.on('exit', () => clearInterval(poll));
    });
    expect(code).toBe(130);
  });
});

describe('duplex-bench, what each command loads', () => {
  // Preloaded into the process: at exit, the npm packages our bundle required, as one stderr line.
  const LIST_PACKAGES = `
const Module = require('node:module');
const load = Module._load;
const packages = new Set();
Module._load = function (request, parent) {
  if (!/^(node:|\\.|\\/)/.test(request) && parent && !parent.filename.includes('node_modules') && !Module.isBuiltin(request)) packages.add(request.split('/')[0]);
  return load.apply(this, arguments);
};
process.on('exit', () => process.stderr.write('packages: ' + [...packages].sort().join(' ') + '\\n'));
`;
  let preload: string[];
  beforeAll(async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'loads-')), 'list-packages.js');
    await writeFile(file, LIST_PACKAGES);
    preload = ['--require', file];
  });
  const packagesOf = (stderr: string) => (/packages: (.*)\n/.exec(stderr)?.[1] ?? '').split(' ').filter(Boolean);

  it('--version and --help load no package but the flag parser; a command loads only what its code calls', async () => {
    for (const args of [['--version'], ['--help'], ['run', '--help'], ['http', '--help']]) {
      const { code, stderr } = await duplexBench(args, undefined, preload);
      expect(code).toBe(0);
      expect(packagesOf(stderr)).toEqual(['commander']);
    }
    // A run of one process loads the session's packages, not the HTTP client, the launcher's merge or YAML
    // (rxjs is in the bundle: tools/build.ts).
    const dir = await mkdtemp(join(tmpdir(), 'loads-run-'));
    const run = await duplexBench(['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '1', '--duration', '1', '--output', dir], undefined, preload);
    expect(run.code).toBe(1); // nothing listens on port 9
    expect(packagesOf(run.stderr)).toEqual(['commander', 'hdr-histogram-js', 'msgpackr', 'ws']);
  });
});
