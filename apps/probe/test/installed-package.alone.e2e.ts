import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBounded, type Exit } from './spawn.spec-helpers';

// The package as a user gets it: `npm pack` of this checkout, installed with `npm install -g` into an
// empty prefix with production dependencies only, then its `duplex-bench` run from a directory
// outside the checkout: `serve` on a free port, and `run` against it. Needs dist/ (`npm run build`;
// `nx run probe:e2e` builds it first) and the npm registry or npm's cache for the dependencies.
// The installed run must qualify, and npm pack and install load both cores: run alone
// (jest.e2e-alone.config.ts).
jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..', '..');

/** The environment of a shell outside any npm script: nothing of this checkout's npm run or tsx. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(npm_|TSX_|NODE_OPTIONS$|NODE_PATH$)/i.test(k)) env[k] = v;
  return env;
}

/** Runs `file args` in `cwd`, outside any npm script, and waits for it; killed by PID past `bound_ms`. */
function exec(file: string, args: string[], cwd: string, bound_ms: number): Promise<Exit> {
  return runBounded(file, args, { cwd, env: cleanEnv(), bound_ms });
}

describe('the packed kit, installed with production dependencies only', () => {
  let work: string;
  let server: ChildProcess | null = null;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'db-installed-'));
  });
  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await rm(work, { recursive: true, force: true });
  });

  it('npm pack → npm install -g --omit=dev → duplex-bench serve, and run --concurrency 4 --duration 3 against it, exit 0', async () => {
    if (!existsSync(join(ROOT, 'dist', 'duplex-bench.js'))) throw new Error('dist/ is missing: run `npm run build` (or `npx nx run probe:e2e`, which builds it first)');

    // The tarball from dist/ as built (prepack would build again: the e2e target already did).
    const pack = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT, 60_000);
    expect(pack.code).toBe(0);
    const [{ filename, files }] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    const shipped = files.map((f) => f.path);
    expect(shipped).toEqual(expect.arrayContaining(['bin/duplex-bench.js', 'dist/duplex-bench.js', 'dist/probe.js', 'dist/writer-worker.js', 'dist/postprocess-worker.js', 'dist/report-page.js', 'package.json', 'README.md']));
    expect(shipped.filter((p) => /\.ts$|^(apps|libs|tools)\//.test(p))).toEqual([]);

    // Installed as a user would, from a directory that is not the checkout.
    const prefix = join(work, 'prefix');
    const install = await exec('npm', ['install', '-g', '--prefix', prefix, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', join(work, filename)], work, 150_000);
    expect(install.code).toBe(0);
    const installed = join(prefix, 'lib', 'node_modules', 'duplex-bench');
    const deps = await readdir(join(installed, 'node_modules'));
    for (const dev of ['tsx', 'typescript', 'esbuild', 'nx', 'jest']) expect(deps).not.toContain(dev);
    const bin = join(prefix, 'bin', 'duplex-bench');
    expect(await exec(bin, ['--version'], work, 20_000)).toMatchObject({ code: 0, stdout: `${JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).version}\n` });

    // serve on a free port: its one line says where.
    const stats = join(work, 'mock.json');
    server = spawn(bin, ['serve', '--host', '127.0.0.1', '--port', '0', '--stats-output', stats], { cwd: work, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let served = '';
    server.stdout?.on('data', (d) => (served += d));
    server.stderr?.on('data', (d) => (served += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line within 20 s: ${served}`)), 20_000);
      const check = () => {
        const m = /listening on (ws:\/\/\S+)\n/.exec(served);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      server?.stdout?.on('data', check);
      server?.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${served}`)));
    });

    // A run against it, its trace writer thread started from dist/.
    const out = join(work, 'run1');
    const run = await exec(bin, ['run', '--url', url, '--concurrency', '4', '--duration', '3', '--output', out], work, 60_000);
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as { verdict: string; sessions: { completed: number } };
    expect(summary).toMatchObject({ verdict: 'qualified', sessions: { completed: 4 } });

    // Ended by its PID, as on SIGINT: it writes its stats and exits 0.
    const exited = new Promise<number | null>((resolve) => server?.once('exit', resolve));
    process.kill(server.pid as number, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(stats)).toBe(true);
  });
});
