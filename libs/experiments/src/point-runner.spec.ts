import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningProcess } from '@duplex-bench/launcher';
import { scriptRunner } from './point-runner';

describe('scriptRunner: each point a fresh node process of the script', () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'point-runner-'))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('passes the args through, holds the process while it runs, and returns its status and last error line', async () => {
    const script = join(dir, 'run.js');
    // Writes its args where the caller can read them, says two errors, and exits 3.
    await writeFile(
      script,
      "require('node:fs').writeFileSync(process.argv[process.argv.length - 1], JSON.stringify(process.argv.slice(2)));\nprocess.stderr.write('error: first\\nnot an error\\nerror: last one\\n');\nprocess.exitCode = 3;\n",
    );
    const out = join(dir, 'args.json');
    const running: RunningProcess = { child: null };
    const exit = scriptRunner(script)(['run', '--output', out], running);
    expect(running.child?.pid).toEqual(expect.any(Number));
    expect(await exit).toEqual({ code: 3, error: 'error: last one' });
    expect(running.child).toBeNull();
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(['run', '--output', out]);
  });

  it('gives no error line when the run wrote none, and its code when it ends well', async () => {
    const script = join(dir, 'quiet.js');
    await writeFile(script, "process.stderr.write('warning: only this\\n');\n");
    expect(await scriptRunner(script)(['run'], { child: null })).toEqual({ code: 0, error: null });
  });
});
