import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';

jest.setTimeout(60_000);

const MAIN = join(__dirname, '..', 'src', 'main.ts');

function start(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('mock did not exit within 20 s'));
    }, 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s: ${seen}`)), 20_000);
    child.stdout?.on('data', (d) => {
      seen += d;
      const m = /^listening on (ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime)\n/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

describe('mock serve', () => {
  it('prints its URL when ready, and writes its stats on SIGTERM, then exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mock-serve-'));
    const stats = join(dir, 'nested', 'mock.json');
    const child = start(['serve', '--port', '0', '--stats-output', stats]);
    const exit = exitOf(child);
    const url = await listening(child);
    // One session's handshake, so the stats count something.
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (d) => {
        if (JSON.parse(String(d)).type === 'session.created') resolve();
      });
      ws.on('error', reject);
    });
    ws.close();
    await new Promise((r) => ws.once('close', r));
    child.kill('SIGTERM');
    const { code, stderr } = await exit;
    expect(code).toBe(0);
    expect(stderr).toMatch(/^SIGTERM: 1 sessions/);
    const written = JSON.parse(await readFile(stats, 'utf8'));
    expect(written.sessions.opened).toBe(1);
    expect(written.measurement_origin.arrival_deviation_ms).toMatch(/mock/);
  });

  it('speaks the openai dialect with --protocol openai, with the vLLM-Omni extensions when asked', async () => {
    const child = start(['serve', '--port', '0', '--protocol', 'openai', '--vllm-extensions', '--unit-ms', '160']);
    const exit = exitOf(child);
    const url = await listening(child);
    const ws = new WebSocket(url);
    const created = await new Promise<Record<string, unknown>>((resolve, reject) => {
      ws.once('message', (d) => resolve(JSON.parse(String(d))));
      ws.on('error', reject);
    });
    ws.close();
    await new Promise((r) => ws.once('close', r));
    child.kill('SIGINT');
    expect((await exit).code).toBe(0);
    expect(created).toMatchObject({ type: 'session.created', server_event_seq: 1, session: { type: 'realtime', capabilities: { chunk_period_ms: 160 } } });
  });

  it('refuses openai-only flags with the native dialect', async () => {
    const { code, stderr } = await exitOf(start(['serve', '--port', '0', '--event-names', 'beta']));
    expect(code).toBe(2);
    expect(stderr).toBe('error: --event-names is for --protocol openai\n');
  });

  it('refuses a --conversation it cannot read in one line with status 2', async () => {
    const { code, stderr } = await exitOf(start(['serve', '--port', '0', '--profile', 'nemotron', '--conversation', '/no/such/script.yaml']));
    expect(code).toBe(2);
    expect(stderr).toBe('error: --conversation /no/such/script.yaml: no such file (built-in scripts: default)\n');
  });

  it('refuses a bad flag in one line with status 2', async () => {
    const { code, stderr } = await exitOf(start(['serve', '--port', '70000']));
    expect(code).toBe(2);
    expect(stderr).toBe('error: --port must be at most 65535, got 70000\n');
  });
});
