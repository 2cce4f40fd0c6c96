import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';

jest.setTimeout(90_000);

const MAIN = join(__dirname, '..', 'src', 'main.ts');

function exitOf(child: ChildProcess, bound_ms: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`probe did not exit within ${bound_ms} ms`));
    }, bound_ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Resolves when the child's stderr has printed a line matching `pattern`. */
function stderrLine(child: ChildProcess, pattern: RegExp, bound_ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} on stderr within ${bound_ms} ms; got: ${seen}`)), bound_ms);
    child.stderr?.on('data', (d) => {
      seen += d;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** Polls `condition` every 50 ms until it holds; fails after `bound_ms`. */
async function until(condition: () => Promise<boolean>, bound_ms: number): Promise<void> {
  const deadline = Date.now() + bound_ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${bound_ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('probe run interrupted by SIGINT', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  async function start(dir: string): Promise<ChildProcess> {
    const args = ['run', '--url', mock.url, '--concurrency', '4', '--duration', '60', '--output', dir, '--quiet', '--trace', 'full', '--keep-traces'];
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    await stderrLine(child, /passed the start gate/, 30_000);
    return child;
  }

  async function everyLineParses(dir: string): Promise<number> {
    let lines = 0;
    for (const id of await readdir(join(dir, 'sessions'))) {
      const text = await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      for (const line of text.slice(0, -1).split('\n')) {
        JSON.parse(line);
        lines++;
      }
    }
    return lines;
  }

  it('stops sending, drains, flushes every trace, writes an interrupted summary and exits 130', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-sigint-'));
    const child = await start(dir);
    // The interrupt lands mid-stream (60 s long), once every session has a trace batch with packets
    // in it on disk: the sessions start spread over a packet, so s0's first batch can come before
    // s3 has sent anything.
    await until(async () => {
      const texts = await Promise.all(['s0', 's1', 's2', 's3'].map((id) => readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8').catch(() => '')));
      return texts.every((text) => text.includes('input_audio_buffer.append'));
    }, 10_000);
    child.kill('SIGINT');
    expect(await exitOf(child, 30_000)).toBe(130);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(summary.interrupted).toBe(true);
    expect(summary.qualified).toBe(false);
    expect(summary.packets.sent).toBeGreaterThan(0);
    expect(summary.packets.sent).toBeLessThan(4 * 750);
    expect(await everyLineParses(dir)).toBeGreaterThan(0);
    for (const id of await readdir(join(dir, 'sessions'))) {
      const receipts = JSON.parse(await readFile(join(dir, 'sessions', id, 'input-send-receipts.json'), 'utf8'));
      expect(receipts.appends.length).toBeGreaterThan(0);
    }
  });

  it('leaves at once on a second SIGINT, and every trace line already written still parses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-sigint-'));
    const child = await start(dir);
    child.kill('SIGINT');
    await stderrLine(child, /interrupted: stopping sends/, 10_000);
    child.kill('SIGINT');
    expect(await exitOf(child, 10_000)).toBe(130);
    await everyLineParses(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err; // a session may not have written its first batch yet
    });
  });
});
