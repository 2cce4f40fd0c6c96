import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { startMockServer, type MockServer, type MockStats } from '@duplex-bench/mock-servers';
import type { RunHooks } from './run-command';
import { decodeSamples } from '@duplex-bench/metrics';
import { probe, probeWithHooks } from './run-harness.spec-helpers';

// The client's own timing, asserted exactly (a stall that makes exactly so many sessions late, none
// under 80 ms of loop lag): these run alone, with no other test file beside them (jest.e2e-alone.config.ts).
jest.setTimeout(60_000);

/** `duplex-bench serve` in a process of its own; `stop` ends it with SIGTERM and returns the stats it wrote. */
async function mockProcess(): Promise<{ url: string; stop(): Promise<MockStats>; kill(): void }> {
  const dir = await mkdtemp(join(tmpdir(), 'mock-proc-'));
  const stats = join(dir, 'mock.json');
  const child = spawn(process.execPath, [join(__dirname, '..', '..', '..', '..', 'bin', 'duplex-bench.js'), 'serve', '--port', '0', '--stats-output', stats], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the mock printed no URL within 20 s: ${seen}`)), 20_000);
    child.stdout?.on('data', (d) => {
      seen += d;
      const m = /listening on (ws:\/\/\S+)\n/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(await readFile(stats, 'utf8')) as MockStats;
    },
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

describe('probe run: its own cadence against the append-echo mock', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  const runWith = (flags: string[], hooks: RunHooks, prepare?: (dir: string) => Promise<void>) => probeWithHooks(mock.url, flags, hooks, prepare);

  it('streams every packet, qualifies, and its receipts and samples agree with the summary', async () => {
    const { code, stdout, summary, dir } = await probe(mock.url, ['--concurrency', '4', '--duration', '1.2', '--trace', 'full', '--keep-traces'], 'judged');
    expect(code).toBe(0);
    expect(summary.qualified).toBe(true);
    expect(summary.sessions).toMatchObject({ started: 4, completed: 4, incomplete: 0, with_violation: 0 });
    expect(summary.packets).toEqual({ sent: 4 * 15, late: 0 });
    expect(stdout.trim().split('\n').pop()).toMatch(/^QUALIFIED/);

    const sessions = await readdir(join(dir, 'sessions'));
    expect(sessions).toHaveLength(4);
    let maxDeviation_ms = 0;
    for (const id of sessions) {
      const receipts = JSON.parse(await readFile(join(dir, 'sessions', id, 'input-send-receipts.json'), 'utf8'));
      const appends = receipts.appends as Array<{ event_id: string; seq: number; scheduled_s: number; start_s: number; completed_s: number }>;
      expect(appends.map((a) => a.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i));
      for (const a of appends) {
        expect(a.event_id).toBe(`${id}_a${a.seq}`);
        expect(a.completed_s).toBeGreaterThanOrEqual(a.start_s);
        maxDeviation_ms = Math.max(maxDeviation_ms, Math.abs((a.start_s - appends[0].start_s) * 1000 - a.seq * 80));
      }
      const lines = (await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.filter((l) => l.direction === 'send' && l.event.type === 'input_audio_buffer.append')).toHaveLength(15);
      expect(lines[0].event.type).toBe('session.created');
      expect(lines.at(-1).event.type).toBe('session.closed');
    }
    // HDR keeps 3 significant digits: the summary's max is the receipts' max within 0.1%.
    expect(summary.pacing_deviation_ms.max).toBeCloseTo(maxDeviation_ms, 0);

    const samples = decodeSamples(await readFile(join(dir, 'samples.msgpack')));
    expect(samples.sessions.reduce((n, s) => n + s.seq.length, 0)).toBe(summary.packets.sent);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.load.client_loop.lags_over_80ms).toBe(summary.event_loop_lag_ms.over_80ms);
    expect(run.host.logical_cores).toBeGreaterThan(0);
  });

  it('agrees with the mock in its own process: its arrival deviation (against each session\'s earliest offset) stays within 10 ms of the client\'s send deviation', async () => {
    // Its own process, as in use: a mock on the probe's loop would measure the probe's loop, not the wire.
    const fresh = await mockProcess();
    try {
      const { summary } = await probe(fresh.url, ['--concurrency', '64', '--duration', '2']);
      const stats = await fresh.stop();
      expect(stats.appends).toBe(summary.packets.sent);
      // The mock's arrival adds the loopback hop and its own handler's wait to the client's send
      // deviation: at most 10 ms more, plus whatever the mock's own loop was held up by (its loop lag,
      // measured in the same run; a shared host stalls either process now and then).
      const mockLag = stats.event_loop_lag_ms;
      expect(stats.arrival_deviation_ms.p99 as number).toBeLessThan((summary.pacing_deviation_ms.p99 as number) + 10 + (mockLag.max ?? 0));
      expect(stats.arrival_deviation_ms.p50 as number).toBeLessThan((summary.pacing_deviation_ms.p50 as number) + 10);
      expect(stats.measurement_origin.arrival_deviation_ms).toMatch(/smallest such offset/);
    } finally {
      fresh.kill();
    }
  });

  it.each([
    [150, 8],
    [60, 0],
  ])('a %i ms stall of the client loop makes %i of 8 sessions late', async (stall_ms, violations) => {
    // Starts together: with starts spread over one packet, a 150 ms stall holds only the ticks due
    // in its first 70 ms, 7 of 8 sessions.
    const flags = ['--concurrency', '8', '--duration', '2', '--start-spread-ms', '0', '--inject-stall-ms', String(stall_ms)];
    const { code, summary, stdout } = await probe(mock.url, flags, 'judged');
    expect(summary.sessions.with_violation).toBe(violations);
    expect(summary.qualified).toBe(violations === 0);
    expect(code).toBe(violations === 0 ? 0 : 3);
    expect(stdout.trim().split('\n').pop()).toMatch(violations === 0 ? /^QUALIFIED/ : /^UNQUALIFIED/);
  });

  it('keeps the loop responsive and the traces complete when the writer is slow', async () => {
    const { code, summary, dir } = await runWith(['--concurrency', '4', '--duration', '2', '--trace', 'full', '--keep-traces'], {
      writer: { delay_ms_per_batch: 150 },
    });
    expect(code).toBe(0);
    expect(summary.event_loop_lag_ms.over_80ms).toBe(0);
    expect(summary.trace.max_batch_write_ms).toBeGreaterThanOrEqual(150);
    for (const id of await readdir(join(dir, 'sessions'))) {
      const lines = (await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.filter((l) => l.event.type === 'input_audio_buffer.append')).toHaveLength(25);
      expect(lines.at(-1).event.type).toBe('session.closed');
    }
  });
});
