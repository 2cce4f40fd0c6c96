import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNodeScript, type RunningProcess } from './run-process';

jest.setTimeout(20_000);

describe('runNodeScript', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-process-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const script = async (name: string, body: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, body);
    return path;
  };

  it("resolves with the exit status and the last `error:` line of the script's stderr, given its arguments", async () => {
    const path = await script(
      'fails.js',
      `const [a, b] = process.argv.slice(2);
       process.stderr.write('warning: not an error\\nerror: first\\n');
       process.stderr.write('error: cannot open ' + a + ' and ' + b + '\\nprogress 100%\\n');
       process.exit(4);`,
    );
    expect(await runNodeScript(path, ['x.wav', 'y two'])).toEqual({ code: 4, error: 'error: cannot open x.wav and y two' });
  });

  it('has no error for a script that ended well without one', async () => {
    const path = await script('ok.js', `process.stderr.write('done\\n');`);
    expect(await runNodeScript(path, [])).toEqual({ code: 0, error: null });
  });

  it("keeps only the end of stderr: an error line followed by more than 8 KiB is not the script's last word", async () => {
    const path = await script(
      'chatty.js',
      `process.stderr.write('error: early\\n' + 'x'.repeat(9000) + '\\n', () => process.exit(1));`,
    );
    expect(await runNodeScript(path, [])).toEqual({ code: 1, error: null });
    const within = await script('within.js', `process.stderr.write('error: late\\n' + 'x'.repeat(7000) + '\\n', () => process.exit(1));`);
    expect(await runNodeScript(within, [])).toEqual({ code: 1, error: 'error: late' });
  });

  it('discards stdout, so a script that writes much of it is never held up', async () => {
    const path = await script('loud.js', `process.stdout.write('y'.repeat(4 * 1024 * 1024), () => process.stderr.write('error: wrote it all\\n'));`);
    const running: RunningProcess = { child: null };
    const ended = runNodeScript(path, [], running);
    // A stated bound, far above the script's run: a script held up on a full pipe is ended, and the case fails.
    const bound = setTimeout(() => running.child?.kill('SIGKILL'), 10_000);
    const exit = await ended.finally(() => clearTimeout(bound));
    expect(exit).toEqual({ code: 0, error: 'error: wrote it all' });
  });

  it('holds the child while it runs, so an interrupt can be passed on; a signal ends it with no status', async () => {
    const path = await script('waits.js', `setInterval(() => undefined, 1000);`);
    const running: RunningProcess = { child: null };
    const ended = runNodeScript(path, [], running);
    const child = running.child;
    expect(child?.pid).toEqual(expect.any(Number));
    child?.kill('SIGTERM');
    expect(await ended).toEqual({ code: null, error: null });
    expect(running.child).toBeNull();
    expect(child?.signalCode).toBe('SIGTERM');
  });

  it('runs a TypeScript script through tsx', async () => {
    const path = await script('typed.ts', `const code: number = Number(process.argv[2]);\nprocess.stderr.write(\`error: typed \${code}\\n\`);\nprocess.exitCode = code;\n`);
    expect(await runNodeScript(path, ['7'])).toEqual({ code: 7, error: 'error: typed 7' });
  });
});
