import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { startMockServer, type MockServer, type MockStats } from '@duplex-bench/mock-servers';
import { startFaultyMock, type MockFault } from '@duplex-bench/mock-servers/testing';
import { decodeSamples } from '@duplex-bench/metrics';
import { runCommand, type RunHooks } from './run-command';
import type { RunIo } from '@duplex-bench/cli';
import { parseRunOptions } from './run-options';
import { readSessionRows, type RunSummary } from '@duplex-bench/results';
import { probe } from './run-harness.spec-helpers';
import { mergeCommand } from '../merge/merge-command';

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

describe('probe run against the append-echo mock', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

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

  it('streams every packet, qualifies, and its receipts and samples agree with the summary', async () => {
    const { code, stdout, summary, dir } = await probe(mock.url, ['--concurrency', '4', '--duration', '1.2', '--trace', 'full', '--keep-traces']);
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

  it('deletes traces after summarising unless --keep-traces', async () => {
    const { dir } = await probe(mock.url, ['--concurrency', '1', '--duration', '0.4', '--trace', 'full']);
    expect(await readdir(join(dir, 'sessions', 's0'))).toEqual(['input-send-receipts.json']);
  });

  it.each([
    [150, 8],
    [60, 0],
  ])('a %i ms stall of the client loop makes %i of 8 sessions late', async (stall_ms, violations) => {
    // Starts together: with starts spread over one packet, a 150 ms stall holds only the ticks due
    // in its first 70 ms, 7 of 8 sessions.
    const flags = ['--concurrency', '8', '--duration', '2', '--start-spread-ms', '0', '--inject-stall-ms', String(stall_ms)];
    const { code, summary, stdout } = await probe(mock.url, flags);
    expect(summary.sessions.with_violation).toBe(violations);
    expect(summary.qualified).toBe(violations === 0);
    expect(code).toBe(violations === 0 ? 0 : 3);
    expect(stdout.trim().split('\n').pop()).toMatch(violations === 0 ? /^QUALIFIED/ : /^UNQUALIFIED/);
  });

  it('with --allow-unqualified, an unqualified run exits 0 and still says so', async () => {
    const { code, summary } = await probe(mock.url, ['--concurrency', '2', '--duration', '1', '--inject-stall-ms', '150', '--allow-unqualified']);
    expect(summary.qualified).toBe(false);
    expect(code).toBe(0);
  });
});

describe('probe run against a misbehaving server', () => {
  const cases: Array<[string, MockFault['action'], string[]]> = [
    ['server_closed', 'close', []],
    ['malformed_frame', 'malformed_frame', []],
    ['server_error', 'fatal_error', []],
    ['drain_timeout', 'stop_answering', ['--drain-timeout-s', '0.5']],
  ];
  it.each(cases)('ends only the faulty sessions, as %s', async (reason, action, extra) => {
    const server = await startFaultyMock({ after_appends: 3, action, every_nth_session: 2 });
    try {
      const { code, summary } = await probe(server.url, ['--concurrency', '4', '--duration', '0.8', '--open-parallel', '1', ...extra]);
      expect(summary.sessions).toMatchObject({ started: 4, completed: 2, incomplete: 2, incomplete_reasons: { [reason]: 2 } });
      expect(code).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('counts sessions refused with HTTP 503 as admission_refused after retrying', async () => {
    const server = await startMockServer({ port: 0, max_sessions: 2 });
    try {
      const { summary } = await probe(server.url, ['--concurrency', '4', '--duration', '0.5', '--open-parallel', '1']);
      expect(summary.sessions).toMatchObject({ completed: 2, incomplete_reasons: { admission_refused: 2 } });
      expect(server.stats().sessions.refused_503).toBe(2 * 4);
    } finally {
      await server.close();
    }
  });

  it('fails in one line with status 1 when nothing listens', async () => {
    const server = await startMockServer({ port: 0 });
    const url = server.url;
    await server.close();
    const dir = await mkdtemp(join(tmpdir(), 'probe-run-'));
    let stderr = '';
    const code = await runCommand(parseRunOptions(['--url', url, '--output', dir, '--concurrency', '2', '--duration', '1', '--quiet']), {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      signals: new EventEmitter(),
      exitNow: () => undefined,
      argv: [],
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: cannot connect to ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime: ECONNREFUSED\n$/);
  });
});

describe('probe run and its trace writer', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  async function runWith(flags: string[], hooks: RunHooks, prepare?: (dir: string) => Promise<void>) {
    const dir = await mkdtemp(join(tmpdir(), 'probe-trace-'));
    await prepare?.(dir);
    let stderr = '';
    const io: RunIo = {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      signals: new EventEmitter(),
      exitNow: () => undefined,
      argv: flags,
    };
    const code = await runCommand(parseRunOptions(['--url', mock.url, '--output', dir, '--quiet', ...flags]), io, undefined, hooks);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    return { code, stderr, summary, dir };
  }

  it('fails the sessions the writer held, and the run, when the writer thread dies', async () => {
    const { code, stderr, summary } = await runWith(['--concurrency', '3', '--duration', '1', '--trace', 'full'], {
      onStreaming: (writer) => void writer.killWorker(),
    });
    expect(code).toBe(1);
    expect(summary.sessions).toMatchObject({ completed: 0, incomplete_reasons: { trace_write_failed: 3 } });
    expect(stderr).toMatch(/error: cannot write .*: the trace writer thread exited with code 1; the sessions it held are incomplete/);
  });

  it('fails only the session whose files cannot be written, with the path and errno', async () => {
    const { code, summary, dir } = await runWith(['--concurrency', '3', '--duration', '0.5', '--trace', 'full'], {}, async (d) => {
      await mkdir(join(d, 'sessions'), { recursive: true });
      await writeFile(join(d, 'sessions', 's1'), 'a file where the session directory should be');
    });
    expect(code).toBe(0);
    expect(summary.sessions).toMatchObject({ completed: 2, incomplete: 1, incomplete_reasons: { trace_write_failed: 1 } });
    expect(await readdir(join(dir, 'sessions', 's0'))).toContain('input-send-receipts.json');
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

describe('probe run against the model mock', () => {
  it('reports the server\'s response figures next to the pacing check', async () => {
    const server = await startMockServer({ port: 0, profile: 'minicpmo', unit_ms: 80, output_sample_rate: 22050, model: { ttfp_ms: 200, rtf: 0.5, turn_every_s: 1, tokens_per_step: 2 } });
    try {
      const { code, summary, dir, stdout } = await probe(server.url, ['--concurrency', '4', '--duration', '2']);
      expect(code).toBe(0);
      const d = summary.duplex;
      expect(d).toBeDefined();
      expect(d?.sessions).toBe(4);
      expect(d?.responses).toBe(4 * 2); // 2 s of input, a turn per second
      // Stated tolerance: -40 ms / +80 ms around the mock's 200 ms on a shared host.
      expect(d?.ttfp_ms.p50).toBeGreaterThan(160);
      expect(d?.ttfp_ms.p50).toBeLessThan(280);
      // Output can run ahead of real-time input only while catching up after the first packet:
      // 2 tokens per unit, units 40 ms apart when queued (rtf 0.5), 80 ms apart when waiting for input.
      expect(d?.tpot_ms.p50).toBeGreaterThan(20 - 4);
      expect(d?.tpot_ms.p50).toBeLessThan(40 + 8);
      const file = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
      expect(file.duplex_session_metrics).toHaveLength(4);
      expect(stdout).toMatch(/responses of the 4 complete sessions \(4 answered\): 8 finished/);
      expect(stdout).toMatch(/client, from response.created as received: TTFP p50 /);
    } finally {
      await server.close();
    }
  });

  it("measures the client's hold on each end of input and leaves it out of the server's stream figures", async () => {
    // nemotron: one response per session whose last audio answers the end of input.
    const server = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 } });
    try {
      // Starts 480 ms apart: the first session's end of input (its input's end, 1.6 s after its first
      // append) waits for the last session's last packet, sent one packet before that session's input
      // end: about 480 - 80 = 400 ms.
      const { code, dir } = await probe(server.url, ['--concurrency', '2', '--duration', '1.6', '--start-spread-ms', '960']);
      expect(code).toBe(0);
      const file = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
      const [first, last] = file.duplex_session_metrics as Array<{ input_end_held_ms?: number; stream_audio_generation_ms: number }>;
      expect(first.input_end_held_ms).toBeGreaterThan(400 - 80);
      expect(first.input_end_held_ms).toBeLessThan(400 + 80);
      expect(last.input_end_held_ms ?? 0).toBeLessThan(40);
      // Without the hold left out, the first session's generation time would be ~480 ms longer.
      expect(Math.abs(first.stream_audio_generation_ms - last.stream_audio_generation_ms)).toBeLessThan(150);
      expect(file.input_end_held_ms.count).toBeGreaterThanOrEqual(1);
    } finally {
      await server.close();
    }
  });
});

describe('probe run --shard and --start-at', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  /** `merge` in this process: its status and the clocks it lined up. */
  async function probeMerge(args: string[]): Promise<{ code: number; clocks: { same_clock_disagreement_ms?: number } }> {
    const out = await mkdtemp(join(tmpdir(), 'shard-merge-'));
    let stdout = '';
    const code = await mergeCommand([...args, '--output', out], { stdout: { write: (s: string) => (stdout += s) } });
    expect(stdout).toContain('clocks:');
    return { code, clocks: (JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as { clocks: { same_clock_disagreement_ms?: number } }).clocks };
  }

  /** One shard's run, in this process; its run.json and session ids. */
  async function shard(dir: string, flags: string[]) {
    let stderr = '';
    const io = { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s), isTTY: false }, signals: new EventEmitter(), exitNow: () => undefined, argv: flags };
    const code = await runCommand(parseRunOptions(['--url', mock.url, '--output', dir, '--quiet', '--concurrency', '5', '--duration', '0.8', ...flags]), io);
    return { code, stderr };
  }

  it('two shards at one --start-at: disjoint global session ids that make up the whole, one start instant, each under shard-I', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'shards-'));
    const at = Date.now() + 1500;
    const results = await Promise.all(['0/2', '1/2'].map((s) => shard(dir, ['--shard', s, '--start-at', String(at)])));
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    const runs = await Promise.all([0, 1].map(async (i) => JSON.parse(await readFile(join(dir, `shard-${i}`, 'run.json'), 'utf8')) as { gate_s: number; gate_clock: { monotonic_s: number; epoch_ms: number }; clock_offset: { offset_ms: number }; layout: Record<string, unknown> }));
    const ids = await Promise.all([0, 1].map(async (i) => (await readSessionRows<{ id: string }>(join(dir, `shard-${i}`))).map((x) => x.id).sort()));
    expect(ids).toEqual([['s0', 's1', 's2'], ['s3', 's4']]);
    expect(runs.map((r) => r.layout.shard)).toEqual(['0/2', '1/2']);
    // Each gate is the instant on the reference clock: this host's wall at the gate plus the offset measured to the mock's clock.
    for (const r of runs) expect(Math.abs(r.gate_clock.epoch_ms + (r.gate_s - r.gate_clock.monotonic_s) * 1000 + r.clock_offset.offset_ms - at)).toBeLessThan(1e-3);
    expect(Math.abs(runs[0].gate_s - runs[1].gate_s) * 1000).toBeLessThan(2);
  });

  it("a shard whose clock is 250 ms ahead measures its offset to the mock's reference clock and still starts with the others", async () => {
    const gates = async (extra: string[]) => {
      const dir = await mkdtemp(join(tmpdir(), 'shard-offset-'));
      const at = Date.now() + 1500;
      const results = await Promise.all([
        shard(dir, ['--shard', '0/2', '--start-at', String(at)]),
        shard(dir, ['--shard', '1/2', '--start-at', String(at), '--clock-offset-ms', '250', ...extra]),
      ]);
      expect(results.map((r) => r.code)).toEqual([0, 0]);
      const runs = await Promise.all([0, 1].map(async (i) => JSON.parse(await readFile(join(dir, `shard-${i}`, 'run.json'), 'utf8')) as { gate_s: number; clock_offset: { offset_ms: number; uncertainty_ms: number } | null }));
      return { dir, runs, apart_ms: Math.abs(runs[0].gate_s - runs[1].gate_s) * 1000 };
    };
    // Measured: the offset is found, and the two gates (one host: one monotonic clock, the truth) agree within the uncertainties.
    const measured = await gates([]);
    const [a, b] = measured.runs.map((r) => r.clock_offset as { offset_ms: number; uncertainty_ms: number });
    expect(Math.abs(b.offset_ms - a.offset_ms + 250)).toBeLessThanOrEqual(a.uncertainty_ms + b.uncertainty_ms);
    expect(measured.apart_ms).toBeLessThanOrEqual(a.uncertainty_ms + b.uncertainty_ms + 1);
    // Merged through the offsets, the two mappings of one host's clock agree within the uncertainties too.
    const merged = await probeMerge([join(measured.dir, 'shard-0'), join(measured.dir, 'shard-1'), '--timeline', 'reference']);
    expect(merged.code).toBe(0);
    expect(merged.clocks.same_clock_disagreement_ms).toBeLessThanOrEqual(a.uncertainty_ms + b.uncertainty_ms);
    // Without the reference the skewed shard starts 250 ms early.
    const blind = await gates(['--time-url', 'off']);
    expect(blind.runs[1].clock_offset).toBeNull();
    expect(blind.apart_ms).toBeGreaterThan(240);
  });

  it('merge OUT, the folder of two shards run with --output OUT, pools shard-0 and shard-1 on one host clock; a folder with no runs is named', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'shards-merge-'));
    // Room for a cold start of both shards in this process before the gate (1.5 s was short once here).
    const at = Date.now() + 3000;
    const results = await Promise.all(['0/2', '1/2'].map((s) => shard(dir, ['--shard', s, '--start-at', String(at)])));
    expect(results.map((r) => [r.code, r.stderr.match(/^error: .*$/m)?.[0] ?? null])).toEqual([[0, null], [0, null]]);
    const parts = await Promise.all([0, 1].map(async (i) => JSON.parse(await readFile(join(dir, `shard-${i}`, 'summary.json'), 'utf8')) as RunSummary));
    const out = await mkdtemp(join(tmpdir(), 'shards-merged-'));
    let stdout = '';
    let stderr = '';
    const code = await mergeCommand([dir, '--output', out], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
    expect([code, stderr]).toEqual([0, '']);
    const merged = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as { sources: string[]; sessions: RunSummary['sessions']; packets: RunSummary['packets']; clocks: { timeline: string }; verdict: string };
    expect(merged.sources).toEqual([join(dir, 'shard-0'), join(dir, 'shard-1')]);
    expect(merged.clocks.timeline).toBe('one host');
    expect(merged.sessions).toMatchObject({ started: 5, completed: 5 });
    expect(merged.packets.sent).toBe(parts[0].packets.sent + parts[1].packets.sent);
    expect(merged.verdict).toBe('qualified');
    expect(stdout.trim().split('\n').pop()).toMatch(/^QUALIFIED: /);
    // A folder that holds neither a run nor run folders: the error says what is missing, not a clock.
    const empty = await mkdtemp(join(tmpdir(), 'shards-none-'));
    await expect(mergeCommand([empty, '--output', out], { stdout: { write: () => true } })).rejects.toThrow(
      `${empty} has no samples.msgpack or summary.json and no p*/ or shard-*/ run directories`,
    );
  });

  it('a shard ready after --start-at fails with the reason, streams nothing, and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'shard-late-'));
    const appends = mock.stats().appends;
    const { code, stderr } = await shard(dir, ['--shard', '0/2', '--start-at', String(Date.now() - 50)]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error: ready \d+ ms after --start-at \d+: not starting late/);
    expect(mock.stats().appends).toBe(appends);
  });
});
