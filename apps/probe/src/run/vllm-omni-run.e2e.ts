import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { encodeWavPcm16, syntheticPcm } from '@duplex-bench/audio';
import { startMockServer, type MockServer, type MockServerOptions } from '@duplex-bench/mock-servers';
import { probe } from './run-harness.spec-helpers';
import { checkCommand, parseCheckOptions } from '../check/check-command';
import { mergeCommand } from '../merge/merge-command';

jest.setTimeout(90_000);

interface TraceLine {
  direction: string;
  event: Record<string, unknown> & { type?: string };
}

async function trace(dir: string, id: string): Promise<TraceLine[]> {
  const text = await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TraceLine);
}

/** 12 s of speech-like input: quiet noise, 2.8 s on and 1.2 s off (the synthetic dataset's audio). */
async function speechWav(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'vllm-run-')), 'speech.wav');
  await writeFile(file, encodeWavPcm16(syntheticPcm({ id: 's', subset: '', variant: '', duration_s: 12, file: null, seed: 3 }), 16000));
  return file;
}

/** A server like vLLM-Omni's duplex endpoint: one slot per session, 22,050 Hz output stated in each delta. */
const VLLM: MockServerOptions = {
  port: 0,
  protocol: 'openai',
  profile: 'model',
  input_sample_rate: 16000,
  output_sample_rate: 22050,
  max_sessions: 2,
  model: { ttfp_ms: 100, rtf: 0.5 },
  openai: { flavor: 'vllm-omni', listen_every: 3, silence_ms: 400 },
};

describe('probe run --protocol vllm-omni against a vLLM-Omni-like server', () => {
  let mock: MockServer;
  let wav: string;
  beforeAll(async () => {
    mock = await startMockServer(VLLM);
    wav = await speechWav();
  });
  afterAll(() => mock.close());

  const run = (extra: string[] = []) =>
    probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--audio', wav, '--duration', '12', '--concurrency', '2', '--trace', 'full', '--keep-traces', ...extra]);

  it('speaks first, acknowledges playback and every journaled event, closes every session, and times audio at the delta\'s 22,050 Hz', async () => {
    const { code, summary, dir } = await run();
    expect(code).toBe(0);
    expect(summary.sessions).toMatchObject({ started: 2, completed: 2, incomplete: 0 });
    // Each session's third turn is a listen decision, and one more ends its silent last commit.
    expect(summary.events.dialect).toMatchObject({ listen: 4, resync_required: 0, expired: 0 });
    expect(summary.events.dialect?.playback_acknowledged).toBeGreaterThan(0);
    // A listen turn begins no response (the server sends response.created only with a response's first
    // output), so no ack races a response's end, and none raced the last commit (playback_ack_too_late):
    // the server refused nothing.
    expect(summary.events.dialect).toMatchObject({ playback_ack_after_end: 0, playback_ack_too_late: 0 });
    expect(summary.events.server_error_codes ?? {}).toEqual({});
    expect(summary.vllm_omni).toMatchObject({ playback_ack_after_end: 0 });
    for (const id of ['s0', 's1']) {
      const lines = await trace(dir, id);
      const sent = lines.filter((l) => l.direction === 'send').map((l) => l.event.type);
      const received = lines.filter((l) => l.direction === 'receive');
      expect(sent[0]).toBe('session.update');
      expect(received[0].event.type).toBe('session.created');
      expect(received[1].event.type).toBe('session.updated');
      expect(sent.filter((t) => t === 'session.close')).toHaveLength(1);
      expect(received.at(-1)?.event.type).toBe('session.closed');
      expect(sent.filter((t) => t === 'playback.ack').length).toBeGreaterThan(0);
      // Every journaled event was acknowledged with its number, but session.closed: their client is closed by it and acks nothing more.
      const numbered = received.filter((l) => l.event.type !== 'session.closed').map((l) => l.event.server_event_seq).filter((n): n is number => typeof n === 'number');
      const eventAcks = lines.filter((l) => l.event.type === 'session.event_ack').map((l) => l.event.server_event_seq);
      expect(eventAcks).toEqual(numbered);
      // Every response finished before the last commit is acknowledged whole (at the deltas' 22,050 Hz);
      // after the commit only responses acked before it (or created after it) are acknowledged: the ledger
      // refuses a first ack after a later commit as too late.
      const lastCommit = lines.findIndex((l) => l.event.type === 'input_audio_buffer.commit');
      const before = lines.slice(0, lastCommit);
      const received_ms = new Map<string, number>();
      for (const l of before) {
        if (l.direction !== 'receive' || l.event.type !== 'response.output_audio.delta') continue;
        const id = String(l.event.response_id);
        received_ms.set(id, (received_ms.get(id) ?? 0) + (Buffer.from(String(l.event.delta), 'base64').length / (22050 * 2)) * 1000);
      }
      const finished = new Set(before.filter((l) => l.event.type === 'response.done').map((l) => (l.event.response as { id: string }).id));
      const acked = new Map<string, number>();
      for (const l of before) if (l.event.type === 'playback.ack') acked.set(String(l.event.response_id), Number(l.event.played_ms));
      expect(finished.size).toBeGreaterThanOrEqual(2);
      for (const id of finished) if (received_ms.has(id)) expect(acked.get(id)).toBe(Math.floor(received_ms.get(id) as number));
      const earlier = new Set(before.filter((l) => l.event.type === 'response.created').map((l) => (l.event.response as { id: string }).id));
      const ackedBefore = new Set(before.filter((l) => l.event.type === 'playback.ack').map((l) => String(l.event.response_id)));
      for (const l of lines.slice(lastCommit)) if (l.event.type === 'playback.ack' && earlier.has(String(l.event.response_id))) expect(ackedBefore.has(String(l.event.response_id))).toBe(true);
    }
    const file = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    for (const s of file.duplex_session_metrics) {
      const spoken = s.responses.filter((r: { status?: string }) => r.status === 'completed');
      expect(spoken.length).toBeGreaterThanOrEqual(2);
      // A listen decision names no response: it is counted (events.dialect.listen), never taken for one.
      expect(s.responses.some((r: { status?: string }) => r.status === 'listen')).toBe(false);
      for (const r of spoken) {
        expect(r.audio_duration_origin).toBe('server metadata.audio_duration_ms (cumulative)');
        expect(r.tpot_origin).toBe('server stage 0 vllm_tpot_ms');
        expect(r.audio_duration_ms % 80).toBe(0);
      }
    }
    // The grant asked 24,000 Hz; the deltas state 22,050 Hz, and the figures follow the deltas.
    const runJson = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(runJson.server_grant).toMatchObject({ chunk_period_ms: 80 });
    // No slot is held afterwards: a second run right after is admitted.
    const again = await run(['--duration', '2']);
    expect(again.summary.sessions).toMatchObject({ completed: 2, incomplete: 0 });
    expect(mock.stats().sessions).toMatchObject({ refused_full: 0, held_after_disconnect: 0 });
  });

  it('with --no-playback-ack, the server holds every turn after the first: playback is never acknowledged', async () => {
    const blockedBefore = mock.stats().sessions.blocked_turns ?? 0;
    const { dir } = await run(['--no-playback-ack']);
    for (const id of ['s0', 's1']) {
      const lines = await trace(dir, id);
      expect(lines.filter((l) => l.event.type === 'playback.ack')).toHaveLength(0);
      expect(lines.filter((l) => l.event.type === 'response.created')).toHaveLength(1);
      expect(lines.filter((l) => l.event.type === 'session.close')).toHaveLength(1);
    }
    // The blocked turns are counted when the sessions' sockets close.
    await new Promise((r) => setTimeout(r, 100));
    expect((mock.stats().sessions.blocked_turns ?? 0) - blockedBefore).toBe(2);
  });
});

describe('probe run --protocol vllm-omni: a response still speaking at the last commit', () => {
  it('was acked at 0 ms when created, so its acks after the commit are not refused as playback_ack_too_late', async () => {
    // Every turn speaks: the third starts at 11.2 s and is still streaming when the input ends at 12 s.
    const mock = await startMockServer({ ...VLLM, openai: { ...VLLM.openai, listen_every: 0 } });
    try {
      const { summary, dir } = await probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--audio', await speechWav(), '--duration', '12', '--concurrency', '1', '--trace', 'full', '--keep-traces']);
      expect(summary.sessions).toMatchObject({ completed: 1 });
      const lines = await trace(dir, 's0');
      const commit = lines.findIndex((l) => l.event.type === 'input_audio_buffer.commit');
      const streaming = lines.slice(commit).some((l) => l.direction === 'receive' && l.event.type === 'response.output_audio.delta');
      expect(streaming).toBe(true);
      // Its audio is acked after the commit (the ledger keeps the place of a response acked before), and nothing is refused.
      expect(lines.slice(commit).some((l) => l.direction === 'send' && l.event.type === 'playback.ack' && Number(l.event.played_ms) > 0)).toBe(true);
      expect(summary.events.server_error_codes).toEqual({});
    } finally {
      await mock.close();
    }
  });
});

/** A Qwen3-Omni-like server: a turn-based model behind server VAD, answering only the turns the server commits. */
const QWEN3_OMNI: MockServerOptions = { ...VLLM, openai: { ...VLLM.openai, listen_every: 0, turn_based: true } };

describe('probe run --protocol vllm-omni --turn-detection server_vad against a turn-based model', () => {
  it('asks no auto_response, sends no commit, answers every turn the server cut, closes only when they settled, and exits 0 with no violation', async () => {
    const mock = await startMockServer(QWEN3_OMNI);
    try {
      // 6 s of speech-like input: two turns (2.8 s on, 1.2 s off), the last one closed by the trailing silence.
      const { code, summary, dir } = await probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--turn-detection', 'server_vad', '--audio', await talkWav(6), '--concurrency', '2', '--duration', '6', '--trace', 'full', '--keep-traces']);
      expect(code).toBe(0);
      expect(summary.sessions).toMatchObject({ started: 2, completed: 2, incomplete: 0 });
      for (const id of ['s0', 's1']) {
        const lines = await trace(dir, id);
        const session = lines.find((l) => l.event.type === 'session.update')?.event.session as Record<string, unknown>;
        expect(session).toMatchObject({ turn_detection: { type: 'server_vad' }, extra_body: { auto_response: false } });
        expect(lines.filter((l) => l.event.type === 'input_audio_buffer.commit')).toEqual([]);
        // 6 s of input and 1.5 s of silence after it.
        const appended = lines.filter((l) => l.event.type === 'input_audio_buffer.append').reduce((ms, l) => ms + Number(l.event.duration_ms), 0);
        expect(appended).toBe(7520);
        const received = lines.filter((l) => l.direction === 'receive');
        expect(received.filter((l) => l.event.type === 'input_audio_buffer.committed')).toHaveLength(2);
        expect(received.filter((l) => l.event.type === 'response.done')).toHaveLength(2);
        // The close went after the last turn was answered.
        const closeAt = lines.findIndex((l) => l.event.type === 'session.close');
        const lastDone = lines.map((l) => l.event.type).lastIndexOf('response.done');
        expect(closeAt).toBeGreaterThan(lastDone);
      }
      expect(mock.stats().sessions.protocol_violations).toEqual({});
    } finally {
      await mock.close();
    }
  });
});

/** A MiniCPM-o-4.5-like server: the reference voice required, the ledger's too-late rule, two slots. */
const MINICPMO_45: MockServerOptions = { ...VLLM, openai: { ...VLLM.openai, listen_every: 0, require_ref_audio: true, disconnect_grace_ms: 3000 } };

async function voiceWav(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'vllm-voice-')), 'voice.wav');
  await writeFile(file, encodeWavPcm16(syntheticPcm({ id: 'v', subset: '', variant: '', duration_s: 1, file: null, seed: 5 }), 16000));
  return file;
}

async function talkWav(duration_s: number): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'vllm-talk-')), 'talk.wav');
  await writeFile(file, encodeWavPcm16(syntheticPcm({ id: 't', subset: '', variant: '', duration_s, file: null, seed: 3 }), 16000));
  return file;
}

describe('probe run --protocol vllm-omni against the newest endpoint (reference voice required)', () => {
  it('sends the voice, commits every 4 s with no ack refused, closes every session with session.close, and exits 0', async () => {
    const mock = await startMockServer(MINICPMO_45);
    try {
      const voice = await voiceWav();
      const { code, summary, dir } = await probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--ref-audio', voice, '--audio', await talkWav(16), '--concurrency', '2', '--duration', '16', '--commit-every-s', '4', '--trace', 'full', '--keep-traces']);
      expect(code).toBe(0);
      expect(summary.sessions).toMatchObject({ started: 2, completed: 2, incomplete: 0 });
      expect(summary.events.server_error_codes ?? {}).toEqual({});
      const voiceUrl = `data:audio/wav;base64,${(await readFile(voice)).toString('base64')}`;
      for (const id of ['s0', 's1']) {
        const lines = await trace(dir, id);
        const update = lines.find((l) => l.event.type === 'session.update');
        expect((update?.event.session as Record<string, unknown>).ref_audio).toBe(voiceUrl);
        expect(((update?.event.session as Record<string, unknown>).extra_body as Record<string, unknown>).return_stage_metrics).toBe(true);
        expect(lines.filter((l) => l.event.type === 'input_audio_buffer.commit').length).toBeGreaterThanOrEqual(4);
        expect(lines.filter((l) => l.direction === 'receive' && l.event.type === 'response.done').length).toBeGreaterThanOrEqual(2);
        expect(lines.filter((l) => l.event.type === 'session.close')).toHaveLength(1);
        expect(lines.filter((l) => l.event.type === 'session.closed')).toHaveLength(1);
      }
      // Their benchmark's names, with their meanings: the server's own TTFP where it sent one.
      expect(summary.vllm_omni?.ttfp_ms?.count).toBeGreaterThanOrEqual(4);
      expect(summary.vllm_omni?.measurement_origin.ttfp).toMatch(/^server response_request_metrics/);
      expect(summary.vllm_omni?.tpot_ms?.p50).toBe(20);
      const runJson = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
      expect(runJson.server_grant).toMatchObject({ output_sample_rate: 24000, output_sample_rate_used: 22050, delta_sample_rates: { '22050': expect.any(Number) } });
      expect(runJson.dialect).toMatchObject({ max_admission_attempts: 12, close_timeout_ms: 20000, handshake_timeout_ms: 30000, ref_audio: { file: voice } });
      expect(mock.stats().sessions).toMatchObject({ refused_full: 0, held_after_disconnect: 0 });
      // check grades the run by its own protocol (run.json), not against the native contract.
      let out = '';
      const checked = await checkCommand(parseCheckOptions([dir]), { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => undefined } });
      expect(out).toMatch(/2 session\(s\): 2 pass, 0 fail.*graded as a vllm-omni run/);
      expect(checked).toBe(0);
      // merge keeps the block: the pooled figures under their names.
      const mergedDir = await mkdtemp(join(tmpdir(), 'vllm-merged-'));
      // Its status follows the run's cadence, which this file does not judge (run-harness.spec-helpers.ts).
      expect(await mergeCommand([dir, '--output', mergedDir], { stdout: { write: () => undefined }, stderr: { write: () => undefined } })).toBe(summary.qualified ? 0 : 3);
      const merged = JSON.parse(await readFile(join(mergedDir, 'summary.json'), 'utf8'));
      expect(merged.vllm_omni.ttfp_ms).toEqual(summary.vllm_omni?.ttfp_ms);
    } finally {
      await mock.close();
    }
  });

  it("exits 0 against a server whose response.created is crossed on the wire by the client's next commit: the refused first acks are counted, no session fails", async () => {
    // Its frames leave 500 ms late, and the client commits every 400 ms: a commit reaches the server
    // after it began each response and before the client saw it begin.
    const mock = await startMockServer({ ...MINICPMO_45, model: { ttfp_ms: 900, rtf: 0.5 }, openai: { ...MINICPMO_45.openai, send_lag_ms: 500 } });
    try {
      const flags = ['--protocol', 'vllm-omni', '--model', 'm', '--ref-audio', await voiceWav(), '--audio', await talkWav(5), '--concurrency', '2', '--duration', '5', '--commit-every-s', '0.4'];
      const { code, summary, dir } = await probe(mock.url, flags);
      expect(code).toBe(0);
      expect(summary.sessions).toMatchObject({ started: 2, completed: 2, incomplete: 0 });
      expect(summary.vllm_omni?.playback_ack_too_late).toBeGreaterThanOrEqual(2);
      // Merged, the refused acks are still counted (the pooled response rows do not hold them).
      const mergedDir = await mkdtemp(join(tmpdir(), 'vllm-merged-acks-'));
      await mergeCommand([dir, '--output', mergedDir], { stdout: { write: () => undefined }, stderr: { write: () => undefined } });
      expect(JSON.parse(await readFile(join(mergedDir, 'summary.json'), 'utf8')).vllm_omni.playback_ack_too_late).toBe(summary.vllm_omni?.playback_ack_too_late);
    } finally {
      await mock.close();
    }
  });

  it('without --ref-audio every session is refused with ref_audio_required, and the run fails', async () => {
    const mock = await startMockServer(MINICPMO_45);
    try {
      const { code, summary } = await probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--concurrency', '2', '--duration', '2']);
      expect(code).toBe(1);
      expect(summary.sessions).toMatchObject({ completed: 0, incomplete: 2, incomplete_reasons: { server_error: 2 } });
      expect(summary.events.server_error_codes).toEqual({ ref_audio_required: 2 });
    } finally {
      await mock.close();
    }
  });

  it('waits for two slots still held by a client that vanished, with bounded retries and no flag, and completes', async () => {
    const mock = await startMockServer(MINICPMO_45);
    try {
      // A client that opened two sessions and vanished without session.close: each slot is held for the grace (3 s here, 30 s on the real server).
      for (let i = 0; i < 2; i++) {
        const ws = new WebSocket(mock.url);
        await new Promise((r) => ws.once('open', r));
        const created = new Promise((r) => ws.once('message', r));
        ws.send(JSON.stringify({ type: 'session.update', session: { ref_audio: 'data:audio/wav;base64,UklGRg==' } }));
        await created;
        ws.terminate();
      }
      const { code, summary, dir } = await probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--ref-audio', await voiceWav(), '--concurrency', '2', '--duration', '2', '--trace', 'events', '--keep-traces']);
      expect(code).toBe(0);
      expect(summary.sessions).toMatchObject({ completed: 2, incomplete: 0 });
      expect(mock.stats().sessions.refused_full).toBeGreaterThanOrEqual(2);
      // The mock logs each refusal at the opening session.update as an admission decision.
      expect(mock.stats().admissions.refused).toBe(mock.stats().sessions.refused_full);
      // Each refusal is an admission record, numbered from one, before the attempt that got the slot.
      const admissions = (await trace(dir, 's0')).filter((l) => l.direction === 'admission');
      expect(admissions.length).toBeGreaterThanOrEqual(1);
      expect(admissions.map((l) => l.event.attempt)).toEqual(admissions.map((_, i) => i + 1));
      expect(admissions[0].event).toMatchObject({ type: 'session_refused', code: 'resource_exhausted' });
      // Refusals are not server errors of the session that got its slot.
      expect(summary.events.server_error_codes ?? {}).toEqual({});
    } finally {
      await mock.close();
    }
  });
});

describe('the vllm-omni mock', () => {
  it('waits for the client\'s first message, then answers config_timeout and closes', async () => {
    const mock = await startMockServer({ ...VLLM, openai: { ...VLLM.openai, config_timeout_ms: 200 } });
    try {
      const ws = new WebSocket(mock.url);
      const frames: string[] = [];
      ws.on('message', (d) => frames.push(String(d)));
      const code = await new Promise<number>((resolve) => ws.on('close', (c) => resolve(c)));
      expect(frames.map((f) => JSON.parse(f).type)).toEqual(['error']);
      expect(JSON.parse(frames[0]).error).toMatchObject({ code: 'config_timeout' });
      expect(code).toBe(1000);
    } finally {
      await mock.close();
    }
  });

  it('holds the slot of a session dropped without session.close for the grace, refusing the next with resource_exhausted', async () => {
    const mock = await startMockServer({ ...VLLM, max_sessions: 1, openai: { ...VLLM.openai, disconnect_grace_ms: 300 } });
    // Opens a session and waits (at most 5 s) for its first `n` frames, or for the server to close it.
    const open = async (n: number) => {
      const ws = new WebSocket(mock.url);
      const frames: Array<Record<string, unknown>> = [];
      const enough = new Promise<void>((resolve) => {
        ws.on('message', (d) => frames.push(JSON.parse(String(d))) >= n && resolve());
        ws.once('close', () => resolve());
        setTimeout(resolve, 5000).unref();
      });
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify({ type: 'session.update', session: {}, event_id: 'u' }));
      await enough;
      return { ws, frames };
    };
    try {
      const first = await open(2);
      expect(first.frames.map((f) => f.type)).toEqual(['session.created', 'session.updated']);
      first.ws.terminate();
      // The mock holds the dropped session's slot for its 300 ms grace (waited for, at most 2 s): the next is refused within it.
      for (let i = 0; i < 200 && mock.stats().sessions.held_after_disconnect !== 1; i++) await new Promise((r) => setTimeout(r, 10));
      const refused = await open(1);
      expect(refused.frames[0]).toMatchObject({ type: 'error', error: { code: 'resource_exhausted' } });
      expect(mock.stats().sessions).toMatchObject({ held_after_disconnect: 1, refused_full: 1 });
      await new Promise((r) => setTimeout(r, 400));
      const admitted = await open(2);
      expect(admitted.frames.map((f) => f.type)).toEqual(['session.created', 'session.updated']);
      admitted.ws.terminate();
    } finally {
      await mock.close();
    }
  });
});
