import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import type { RunIo } from '@duplex-bench/cli';
import { recordCommand } from './record-command';
import { parseWavPcm16 } from '@duplex-bench/audio';
import { decodeSamples } from '@duplex-bench/metrics';
import { parseRecordOptions } from './record-options';
import { mergeResult, type SampleResult } from '@duplex-bench/run';

jest.setTimeout(60_000);

// Turns on 80 ms units at 22,050 Hz: the minicpmo model's turns on nemotron's unit and rate.
const TURNS = { profile: 'minicpmo' as const, unit_ms: 80, output_sample_rate: 22050 };

function io(): RunIo & { out: () => string; signals: EventEmitter } {
  let stdout = '';
  return {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: () => true },
    signals: new EventEmitter(),
    exitNow: () => undefined,
    argv: [],
    out: () => stdout,
  };
}

async function results(dir: string): Promise<Map<string, SampleResult>> {
  const out = new Map<string, SampleResult>();
  for (const name of await readdir(join(dir, 'samples'))) {
    const r = JSON.parse(await readFile(join(dir, 'samples', name), 'utf8')) as SampleResult;
    out.set(r.sample_id, r);
  }
  return out;
}

describe('probe record against the model mock', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, ...TURNS, model: { ttfp_ms: 100, rtf: 0.5, turn_every_s: 1 } });
  });
  afterAll(() => mock.close());

  const flags = (dir: string) => ['--url', mock.url, '--output', dir, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '1', '--max-input-s', '1.6'];

  it('records every sample of the synthetic dataset, both variants, with response metrics', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-'));
    expect(await recordCommand(parseRecordOptions(flags(dir)), io())).toBe(0);
    const stored = await results(dir);
    expect(stored.size).toBe(8);
    for (const r of stored.values()) {
      expect(r.completed).toBe(true);
      expect(r.response_metrics?.ttfp_ms.count).toBeGreaterThan(0);
    }
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.samples).toMatchObject({ total: 8, recorded: 8, completed: 8 });
    // The summary's duration is the longest input recorded (it was a hard-coded 0).
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(summary.duration_s).toBe(Math.max(...[...stored.values()].map((r) => r.duration_s)));
    expect(summary.duration_s).toBeGreaterThanOrEqual(1);
    expect(typeof run.load.client_loop.lags_over_80ms).toBe('number');
    const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    expect(duplex.duplex_session_metrics).toHaveLength(8);
  });

  it('resumes with nothing left: reports the stored result and rewrites no file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-'));
    await recordCommand(parseRecordOptions(flags(dir)), io());
    const before = await results(dir);
    const files = ['summary.json', 'run.json', 'duplex_metrics.json', 'samples.msgpack'];
    const contents = await Promise.all(files.map((f) => readFile(join(dir, f))));
    const again = io();
    expect(await recordCommand(parseRecordOptions(flags(dir)), again)).toBe(0);
    expect(again.out()).toMatch(/all already complete; nothing recorded, nothing rewritten\nQUALIFIED: as stored/);
    expect(await results(dir)).toEqual(before);
    const after = await Promise.all(files.map((f) => readFile(join(dir, f))));
    for (const [i, f] of files.entries()) expect([f, after[i].equals(contents[i])]).toEqual([f, true]);
    const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    expect(duplex.duplex_session_metrics).toHaveLength(8);
  });

  it('resumes a partial recording: reruns only the unfinished sample, merging by sample id', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-'));
    await recordCommand(parseRecordOptions(flags(dir)), io());
    const before = await results(dir);
    const target = before.get('qa-000-b') as SampleResult;
    await writeFile(join(dir, 'samples', 'qa-000-b.json'), JSON.stringify({ ...target, completed: false, reason: 'server_closed' }));
    const again = io();
    await recordCommand(parseRecordOptions(flags(dir)), again);
    expect(again.out()).toMatch(/7 already done, 1 recorded now, 1 completed/);
    const after = await results(dir);
    expect(after.get('qa-000-b')?.completed).toBe(true);
    expect(after.get('chat-000-a')).toEqual(before.get('chat-000-a'));
    // The earlier attempt's trace is kept aside; the new trace holds one session only.
    const session = join(dir, 'sessions', 'qa-000-b');
    const trace = await readFile(join(session, 'trace.jsonl'), 'utf8');
    expect(trace.match(/"type":"session\.created"/g)).toHaveLength(1);
    const earlier = await readFile(join(session, 'trace.attempt-1.jsonl'), 'utf8');
    expect(earlier.match(/"type":"session\.created"/g)).toHaveLength(1);
    expect(after.get('qa-000-b')?.attempts).toHaveLength(2);
    // Each attempt keeps its packets; the record points at its own attempt's.
    expect(after.get('qa-000-b')?.pacing_file).toBe(join('sessions', 'qa-000-b', 'pacing.msgpack'));
    expect(after.get('qa-000-b')?.attempts?.[0].pacing_file).toBe(join('sessions', 'qa-000-b', 'pacing.attempt-1.msgpack'));
    await readFile(join(session, 'pacing.attempt-1.msgpack'));
    // The summary's pacing covers every stored sample, not only this invocation's one.
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    const stored = [...after.values()];
    expect(summary.packets.sent).toBe(stored.reduce((n, r) => n + r.packets_sent, 0));
    expect(summary.sessions).toMatchObject({ started: 8, completed: 8 });
    expect(decodeSamples(await readFile(join(dir, 'samples.msgpack'))).sessions.map((x) => x.id).sort()).toEqual(stored.map((r) => r.sample_id).sort());
    // run.json keeps both invocations.
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.invocations.map((i: { recorded: number; interrupted: boolean }) => [i.recorded, i.interrupted])).toEqual([
      [8, false],
      [1, false],
    ]);
  });
});

describe('probe record interrupted, then run again', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, ...TURNS, model: { ttfp_ms: 100, rtf: 0.5, turn_every_s: 1 } });
  });
  afterAll(() => mock.close());

  it('stores no cut-short sample as complete; the resumed summary covers every sample; a second resume changes no file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-int-'));
    const flags = ['--url', mock.url, '--output', dir, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '2', '--max-input-s', '3'];
    const first = io();
    const running = recordCommand(parseRecordOptions(flags), first);
    // SIGINT once the first wave streams: its four sessions are cut short.
    for (let i = 0; i < 200 && !(await readdir(join(dir, 'sessions')).catch(() => [])).length; i++) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 800));
    first.signals.emit('SIGINT');
    expect(await running).toBe(130);
    const cut = await results(dir);
    expect(cut.size).toBeGreaterThan(0);
    for (const r of cut.values()) expect([r.sample_id, r.completed, r.reason]).toEqual([r.sample_id, false, 'interrupted']);

    expect(await recordCommand(parseRecordOptions(flags), io())).toBe(0);
    const after = await results(dir);
    expect(after.size).toBe(8);
    for (const r of after.values()) {
      expect(r.completed).toBe(true);
      // Every packet of its input: one per 80 ms, the last one partial.
      expect(r.packets_sent).toBe(Math.ceil((r.duration_s * 1000) / 80 - 1e-9));
    }
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(summary.packets.sent).toBe([...after.values()].reduce((n, r) => n + r.packets_sent, 0));
    expect(summary.sessions).toMatchObject({ started: 8, completed: 8, incomplete: 0 });

    const files = ['summary.json', 'run.json', 'duplex_metrics.json', 'samples.msgpack'];
    const contents = await Promise.all(files.map((f) => readFile(join(dir, f))));
    expect(await recordCommand(parseRecordOptions(flags), io())).toBe(0);
    const unchanged = await Promise.all(files.map((f) => readFile(join(dir, f))));
    for (const [i, f] of files.entries()) expect([f, unchanged[i].equals(contents[i])]).toEqual([f, true]);
    expect(await results(dir)).toEqual(after);
  });
});

describe('probe record post-processing', () => {
  let mock: MockServer;
  beforeAll(async () => {
    // A real profile: post-processing holds each native trace to the contract of its grant.
    mock = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 } });
  });
  afterAll(() => mock.close());

  const flags = (dir: string, where: string) =>
    ['--url', mock.url, '--output', dir, '--concurrency', '3', '--per-subset', '1', '--min-input-s', '2', '--max-input-s', '4', '--postprocess', where, '--allow-unqualified'];

  it('replays each trace in the pool: an output WAV and a small summary per sample', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-pp-'));
    await recordCommand(parseRecordOptions(flags(dir, 'pool')), io());
    for (const r of (await results(dir)).values()) {
      expect(r.postprocess?.problems).toEqual([]);
      expect(r.postprocess?.audio_ms).toBeCloseTo(Math.round(r.duration_s / 0.08) * 80, 0);
      const wav = parseWavPcm16(await readFile(r.postprocess?.wav as string), 'out.wav', 22050);
      expect(wav.length).toBe(r.postprocess?.audio_bytes);
    }
  });

  // 1.5 s of CPU per finished session: in the pool (nice 10, its own process) no packet of the
  // sessions still streaming is late; in the recording process the same work makes one late.
  it.each([
    ['in the pool leaves every packet on time', 'pool', 0],
    ['in the recording process makes a packet late', 'inline', 1],
  ])('post-processing that burns 1.5 s of CPU %s', async (_name, where, minLate) => {
    const dir = await mkdtemp(join(tmpdir(), 'record-burn-'));
    await recordCommand(parseRecordOptions(flags(dir, where as string)), io(), undefined, { postprocess_burn_ms: 1500 });
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    if (minLate === 0) expect(summary.packets.late).toBe(0);
    else expect(summary.packets.late).toBeGreaterThanOrEqual(minLate);
  });
});

describe('mergeResult', () => {
  const base = { sample_id: 's', subset: 'qa', variant: 'a', duration_s: 1, completed: true, violation: false, packets_sent: 10, late: 0, server_errors: 0 };
  it('never replaces a complete record with an incomplete attempt, and lists both attempts', () => {
    const stored = { ...base, response_metrics: { audio_turn_count: 2 } } as unknown as SampleResult;
    const fresh = { ...base, completed: false, reason: 'interrupted', packets_sent: 3, late: 1, violation: true } as unknown as SampleResult;
    const merged = mergeResult(stored, fresh);
    expect(merged).toMatchObject({ completed: true, packets_sent: 10, late: 0, violation: false, response_metrics: { audio_turn_count: 2 } });
    expect(merged.reason).toBeUndefined();
    expect(merged.attempts?.map((a) => [a.completed, a.packets_sent])).toEqual([
      [true, 10],
      [false, 3],
    ]);
  });

  it('keeps a record whole from one attempt: a complete rerun replaces an incomplete record, old metrics and reason included', () => {
    const stored = { ...base, completed: false, reason: 'server_closed', late: 2, violation: true, response_metrics: { audio_turn_count: 1 }, postprocess_error: 'x' } as unknown as SampleResult;
    const fresh = { ...base } as unknown as SampleResult;
    const merged = mergeResult(stored, fresh);
    expect(merged).toMatchObject({ completed: true, late: 0, violation: false });
    expect(merged.response_metrics).toBeUndefined();
    expect(merged.reason).toBeUndefined();
    expect(merged.postprocess_error).toBeUndefined();
    expect(merged.attempts).toHaveLength(2);
  });
  it('takes fresh metrics over stored ones', () => {
    const stored = { ...base, response_metrics: { audio_turn_count: 2 } } as unknown as SampleResult;
    const fresh = { ...base, response_metrics: { audio_turn_count: 3 } } as unknown as SampleResult;
    expect(mergeResult(stored, fresh).response_metrics).toEqual({ audio_turn_count: 3 });
  });
});

describe('probe record --protocol openai', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, protocol: 'openai', profile: 'model', model: { ttfp_ms: 100, rtf: 0.5, turn_every_s: 1 }, openai: { silence_ms: 300 } });
  });
  afterAll(() => mock.close());

  it('records the dataset at 24 kHz, post-processes each session into a 24 kHz WAV, and finds no problem', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-openai-'));
    const flags = ['--url', mock.url, '--protocol', 'openai', '--sample-rate', '24000', '--output', dir, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '1', '--max-input-s', '1.6'];
    expect(await recordCommand(parseRecordOptions(flags), io())).toBe(0);
    const stored = await results(dir);
    expect(stored.size).toBe(8);
    for (const r of stored.values()) {
      expect(r.completed).toBe(true);
      expect(r.response_metrics?.ttfp_ms.count).toBeGreaterThan(0);
      expect(r.postprocess?.problems).toEqual([]);
      // Input is conserved as output: every whole 80 ms unit (the tail padded) comes back as 24 kHz audio.
      expect(r.postprocess?.audio_ms).toBeCloseTo(Math.ceil(r.duration_s / 0.08 - 1e-9) * 80, 0);
      const wav = parseWavPcm16(await readFile(r.postprocess?.wav as string), 'out.wav', 24000);
      expect(wav.length).toBe(r.postprocess?.audio_bytes);
    }
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.dialect).toMatchObject({ protocol: 'openai', input_sample_rate: 24000, turn_detection: 'server_vad' });
  });
});
