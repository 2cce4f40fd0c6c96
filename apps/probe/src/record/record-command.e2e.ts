import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import type { RunIo } from '@duplex-bench/cli';
import { recordCommand } from './record-command';
import { parseWavPcm16 } from '@duplex-bench/audio';
import { decodeSamples, type BehaviourSummary, type SessionSpeech, type TurnRecord } from '@duplex-bench/metrics';
import { parseRecordOptions } from './record-options';
import { mergeResult, type SampleResult } from '@duplex-bench/run';
import { probe } from '../../test/in-process.spec-helpers';

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

  // Recordings, not the cadence: two test files share the cores here (jest.e2e.config.ts), so a late
  // packet must not fail them; record-postprocess.alone.e2e.ts judges the cadence.
  const flags = (dir: string) => ['--url', mock.url, '--output', dir, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '1', '--max-input-s', '1.6', '--allow-unqualified'];

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
    expect(again.out()).toMatch(/all already complete; nothing recorded, nothing rewritten\n(UN)?QUALIFIED: as stored/);
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

describe('probe record --arrival-rate', () => {
  it('records the samples as they arrive against a server with 2 slots: blocked ones stay incomplete, agree with the mock, and are recorded next time', async () => {
    const mock = await startMockServer({ port: 0, max_sessions: 2, ...TURNS, model: { ttfp_ms: 100, rtf: 0.5, turn_every_s: 1 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'record-arrivals-'));
      // 24 samples of 1-1.6 s arriving 5 a second, constant: about 7 Erlangs offered to 2 slots.
      const flags = ['--url', mock.url, '--output', dir, '--arrival-rate', '5', '--arrivals', 'constant', '--per-subset', '3', '--min-input-s', '1', '--max-input-s', '1.6', '--trace', 'off', '--postprocess', 'off', '--allow-unqualified'];
      expect(await recordCommand(parseRecordOptions(flags), io())).toBe(0);
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      const a = summary.arrivals;
      // One arrival per sample, none skipped; every arrival started or was blocked, as the mock decided.
      expect(a).toMatchObject({ process: 'constant', rate_per_s: 5, arrived: 24, client_skipped: 0, failed_to_open: 0 });
      expect(a.blocked).toBeGreaterThan(0);
      expect(a.started + a.blocked).toBe(24);
      const admissions = mock.stats().admissions;
      expect({ refused: admissions.refused, accepted: admissions.accepted }).toEqual({ refused: a.blocked, accepted: a.started });
      // Every blocked sample is stored incomplete as refused, every started one complete.
      const stored = await results(dir);
      expect(stored.size).toBe(24);
      const refused = [...stored.values()].filter((r) => !r.completed);
      expect(refused).toHaveLength(a.blocked);
      expect(refused.every((r) => r.reason === 'admission_refused')).toBe(true);
      expect(a.completed).toBe(a.started);
      // Recording again takes only what is left: the blocked samples arrive again.
      const before = mock.stats().admissions.refused + mock.stats().admissions.accepted;
      expect(await recordCommand(parseRecordOptions(flags), io())).toBe(0);
      const again = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')).arrivals;
      expect(again.arrived).toBe(a.blocked);
      expect(mock.stats().admissions.refused + mock.stats().admissions.accepted - before).toBe(a.blocked);
      expect([...(await results(dir)).values()].filter((r) => r.completed)).toHaveLength(a.started + again.started);
    } finally {
      await mock.close();
    }
  });

  it('refuses --arrival-rate with --concurrency, and --run-for without it', () => {
    const base = ['--url', 'ws://127.0.0.1:1/v1/realtime', '--output', 'out/x'];
    expect(() => parseRecordOptions([...base, '--arrival-rate', '2', '--concurrency', '4'])).toThrow('--arrival-rate and --concurrency are two loads: give one');
    expect(() => parseRecordOptions([...base, '--concurrency', '4', '--run-for', '10'])).toThrow('--run-for is for --arrival-rate');
    expect(() => parseRecordOptions(base)).toThrow('--concurrency is required (or --arrival-rate)');
    expect(() => parseRecordOptions([...base, '--arrival-rate', '2', '--session-duration', 'exp:2'])).toThrow(/session-duration/);
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
    const flags = ['--url', mock.url, '--output', dir, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '2', '--max-input-s', '3', '--allow-unqualified'];
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
    const flags = ['--url', mock.url, '--protocol', 'openai', '--sample-rate', '24000', '--output', dir, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '1', '--max-input-s', '1.6', '--allow-unqualified'];
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

describe('probe record --conversation against the native mock with behaviour knobs', () => {
  let mock: MockServer;
  beforeAll(async () => {
    // Answers of 1.5 s: by 12 s each session has had q1 answered, q2 answered and its barge-in stopped.
    mock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: 'default', respond_after_ms: 400, stop_after_ms: 200, answer_ms: 1500 } });
  });
  afterAll(() => mock.close());

  interface MockEvent {
    kind: string;
    t_ms: number;
    why?: string;
    means?: string;
  }
  const mockSessions = () => (mock.stats() as unknown as { behaviour: { sessions: Array<{ events: MockEvent[] }> } }).behaviour.sessions;
  const turnsOf = async (dir: string) =>
    (await readFile(join(dir, 'turns.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TurnRecord);
  const record = (dir: string) => probe(['record', '--url', mock.url, '--output', dir, '--conversation', 'default', '--per-subset', '2', '--duration', '12', '--concurrency', '2', '--allow-unqualified']);
  const FILES = ['summary.json', 'turns.jsonl', 'speech.jsonl', 'run.json', 'samples.msgpack', 'duplex_metrics.json'];
  const IDS = ['conversation-000-default', 'conversation-001-default'];

  it('records two conversations: turns.jsonl, the behaviour block and output.wav per sample; a resume keeps them, records nothing new, and pools a rerun sample with the stored one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-conv-'));
    const first = await record(dir);
    expect([first.code, first.stderr, first.stdout]).toEqual([0, expect.not.stringMatching(/error/), expect.any(String)]);
    expect(first.stdout).toMatch(/^behaviour \(client.*response latency p50 \d+/m);

    // Each sample keeps its events, and the file and the summary are made of them.
    const stored = await results(dir);
    expect([...stored.keys()].sort()).toEqual(IDS);
    const turns = await turnsOf(dir);
    expect([...new Set(turns.map((t) => t.session))].sort()).toEqual(IDS);
    for (const r of stored.values()) {
      expect(r).toMatchObject({ completed: true, subset: 'conversation', variant: 'default', duration_s: 12 });
      expect(r.turns).toEqual(turns.filter((t) => t.session === r.sample_id));
      expect(typeof r.overlap_ms).toBe('number');
      // The output audio, rebuilt from the trace in the pool.
      expect(parseWavPcm16(await readFile(join(dir, 'sessions', r.sample_id, 'output.wav')), 'out.wav', 22050).length).toBeGreaterThan(0);
    }
    const speech = (await readFile(join(dir, 'speech.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as SessionSpeech);
    expect(speech.map((x) => x.session)).toEqual(IDS);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { behaviour: BehaviourSummary };
    const b = summary.behaviour;
    const count = (kind: string, outcome: string) => turns.filter((t) => t.kind === kind && t.outcome === outcome).length;
    expect(b.response_latency_ms.count).toBe(count('response', 'answered'));
    expect(b.stop_latency_ms.count).toBe(count('stop', 'stopped'));
    expect(b.response_latency_ms.count).toBeGreaterThanOrEqual(4);
    // Every barge-in the mock stopped for, the probe saw stop: two sessions, one barge-in each. An
    // answer that ends by itself before the mock's VAD has heard the barge-in (a loaded host delays
    // the mock, whose log then says the answer was done) is a stop to the probe as to a listener: the
    // speech that was playing ended. So the probe counts at least the mock's stops.
    const stops = mockSessions().flatMap((s) => s.events.filter((e) => e.kind === 'answer_end' && e.why === 'barge_in'));
    expect(b.stop_latency_ms.count).toBeGreaterThanOrEqual(stops.length);
    expect(b.stop_latency_ms.count).toBeGreaterThanOrEqual(2);
    expect(b.outcomes.answered).toBe(b.response_latency_ms.count);
    // How close the figure is to the mock's own delay is judged alone (record-conversation.alone.e2e.ts):
    // here the mock shares its loop and the cores with two other files' runs.
    expect(b.response_latency_ms.p50).toBeGreaterThan(0);
    expect(Object.keys(b.measurement_origin)).toEqual(expect.arrayContaining(['response_latency_ms', 'stop_latency_ms', 'pause_takeover_rate']));
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.conversation).toMatchObject({ name: 'default', max_stop_s: 3, takeover_min_ms: 500, voice_activity: { engine: expect.any(String) } });
    expect(decodeSamples(await readFile(join(dir, 'samples.msgpack'))).behaviour?.outcomes).toEqual(b.outcomes);

    // Nothing left to record: no session opens, no file changes, the stored figures are said again.
    const opened = mockSessions().length;
    const contents = await Promise.all(FILES.map((f) => readFile(join(dir, f))));
    const again = await record(dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/all already complete; nothing recorded, nothing rewritten\nbehaviour \(client.*\n.*\n(UN)?QUALIFIED: as stored/);
    expect(mockSessions().length).toBe(opened);
    const after = await Promise.all(FILES.map((f) => readFile(join(dir, f))));
    for (const [i, f] of FILES.entries()) expect([f, after[i].equals(contents[i])]).toEqual([f, true]);

    // One sample left incomplete: only it is recorded again, and the figures pool it with the one stored.
    await writeFile(join(dir, 'samples', `${IDS[1]}.json`), JSON.stringify({ ...stored.get(IDS[1]), completed: false, reason: 'server_closed' }));
    const third = await record(dir);
    expect([third.code, third.stdout]).toEqual([0, expect.any(String)]);
    expect(third.stdout).toMatch(/1 already done, 1 recorded now, 1 completed/);
    expect(mockSessions().length).toBe(opened + 1);
    const kept = await results(dir);
    expect(kept.get(IDS[0])).toEqual(stored.get(IDS[0]));
    const pooled = await turnsOf(dir);
    expect(pooled.filter((t) => t.session === IDS[0])).toEqual(stored.get(IDS[0])?.turns);
    expect(pooled.filter((t) => t.session === IDS[1])).toEqual(kept.get(IDS[1])?.turns);
    const resumed = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { behaviour: BehaviourSummary };
    expect(resumed.behaviour.response_latency_ms.count).toBe(pooled.filter((t) => t.kind === 'response' && t.outcome === 'answered').length);
    expect(resumed.behaviour.response_latency_ms.count).toBeGreaterThan(count('response', 'answered') / 2);
  });

  it.each([
    ['--duration without --conversation', ['--duration', '20']],
    ['--conversation with --dataset', ['--conversation', 'default', '--dataset', tmpdir()]],
  ])('refuses %s: one line, exit 2', async (_name, extra) => {
    const dir = await mkdtemp(join(tmpdir(), 'record-usage-'));
    const { code, stderr, stdout } = await probe(['record', '--url', 'ws://127.0.0.1:9/v1/realtime', '--output', dir, '--concurrency', '1', ...extra]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stdout).toBe('');
  });

  it('ends in one line with exit 1 when no session reaches the server, trying no more samples than one wave', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-unreachable-'));
    // Port 9 (discard): nothing listens on 127.0.0.1 here.
    const { code, stderr, stdout } = await probe(['record', '--url', 'ws://127.0.0.1:9/v1/realtime', '--output', dir, '--concurrency', '2', '--per-subset', '1']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n').pop()).toMatch(/^error: cannot connect to ws:\/\/127\.0\.0\.1:9\/v1\/realtime: ECONNREFUSED$/);
    expect(stdout).toBe('');
    // Of the 8 samples, only the first wave was tried; each is stored incomplete, to be recorded next time.
    const tried = await results(dir);
    expect(tried.size).toBeLessThanOrEqual(2);
    expect([...tried.values()].every((r) => !r.completed)).toBe(true);
  });
});
