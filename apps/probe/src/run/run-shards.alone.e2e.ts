import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { readSessionRows, type RunSummary } from '@duplex-bench/results';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';
import { mergeCommand } from '../merge/merge-command';

// Shards meet at one start instant and one clock, asserted within the measured uncertainties, and
// merge as qualified: these run alone, with no other test file beside them (jest.e2e-alone.config.ts).
jest.setTimeout(60_000);

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
