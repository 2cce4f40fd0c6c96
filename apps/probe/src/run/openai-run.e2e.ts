import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
import { startMockServer, type MockServer, type MockServerOptions } from '@duplex-bench/mock-servers';
import { startFaultyMock, type MockFault } from '@duplex-bench/mock-servers/testing';
import { probe } from './run-harness.spec-helpers';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';

jest.setTimeout(60_000);

const servers: MockServer[] = [];
async function openaiMock(o: MockServerOptions = {}, fault?: MockFault): Promise<MockServer> {
  const options: MockServerOptions = { port: 0, protocol: 'openai', ...o };
  const server = fault ? await startFaultyMock(fault, options) : await startMockServer(options);
  servers.push(server);
  return server;
}
afterAll(() => Promise.all(servers.map((s) => s.close())));

const MODEL = { profile: 'model' as const, model: { ttfp_ms: 100, rtf: 0.5, turn_every_s: 0.8 }, openai: { silence_ms: 300 } };

async function traceOf(dir: string, id: string): Promise<Array<{ direction: string; time_s: number; event: Record<string, unknown> & { type: string } }>> {
  return (await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]))));
  return nested.flat();
}

describe('probe run --protocol openai', () => {
  it('passes the end-to-end checks of the native dialect against the openai mock', async () => {
    const mock = await openaiMock(MODEL);
    const { code, summary, dir, stdout } = await probe(mock.url, ['--protocol', 'openai', '--concurrency', '3', '--duration', '1.6', '--trace', 'full', '--keep-traces']);
    expect(code).toBe(0);
    expect(summary.packets.sent).toBe(3 * 20);
    expect(summary.sessions).toMatchObject({ started: 3, completed: 3, incomplete: 0 });
    expect(summary.events).toEqual({ server_errors: 0, server_error_codes: {}, unknown: {} });
    expect(stdout.trim().split('\n').pop()).toMatch(summary.qualified ? /^QUALIFIED/ : /^UNQUALIFIED/);
    for (const id of ['s0', 's1', 's2']) {
      const receipts = JSON.parse(await readFile(join(dir, 'sessions', id, 'input-send-receipts.json'), 'utf8'));
      expect(receipts.appends.map((a: { seq: number }) => a.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      const lines = await traceOf(dir, id);
      expect(lines.slice(0, 3).map((l) => l.event.type)).toEqual(['session.created', 'session.update', 'session.updated']);
      const sent = lines.filter((l) => l.direction === 'send').map((l) => l.event);
      // OpenAI's one input rate, with no --sample-rate given.
      expect(sent[0]).toMatchObject({ session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: { type: 'server_vad' } } } } });
      expect(sent.filter((e) => e.type === 'input_audio_buffer.append')).toHaveLength(20);
      // Two turns of 0.8 s of input, each answered in full before the session closed.
      expect(lines.filter((l) => l.event.type === 'response.done')).toHaveLength(2);
      expect(lines.at(-1)?.event.type).toBe('response.done');
    }
    // 1.6 s of input owes 1.6 s of output; TTFP is the mock's 100 ms, from response.created as received.
    // Its lower bound allows 10 ms for a created frame read late on a busy host (a clean-clone CI run
    // measured 98.9 ms); a TTFP taken from the wrong event would be 0 or the whole turn.
    expect(summary.duplex?.responses).toBe(6);
    expect(summary.duplex?.ttfp_ms.p50).toBeGreaterThanOrEqual(90);
    expect(summary.duplex?.ttfp_ms.p50).toBeLessThan(200);
    const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    for (const s of duplex.duplex_session_metrics) expect(s.stream_audio_duration_ms).toBeCloseTo(1600, 3);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.dialect).toMatchObject({ protocol: 'openai', input_sample_rate: 24000, turn_detection: 'server_vad', bearer_key_sent: false });
  });

  it('measures a server that answers with beta names the same as one that answers with GA names', async () => {
    const ga = await openaiMock(MODEL);
    const beta = await openaiMock({ ...MODEL, openai: { ...MODEL.openai, names: 'beta' } });
    const flags = ['--protocol', 'openai', '--concurrency', '2', '--duration', '1.6'];
    const [a, b] = [await probe(ga.url, flags), await probe(beta.url, flags)];
    for (const r of [a, b]) {
      expect(r.code).toBe(0);
      expect(r.summary.events.unknown).toEqual({});
      expect(r.summary.duplex?.responses).toBe(4);
    }
    const fa = JSON.parse(await readFile(join(a.dir, 'duplex_metrics.json'), 'utf8'));
    const fb = JSON.parse(await readFile(join(b.dir, 'duplex_metrics.json'), 'utf8'));
    const audio = (f: { duplex_session_metrics: Array<{ stream_audio_duration_ms: number }> }) => f.duplex_session_metrics.map((s) => s.stream_audio_duration_ms);
    expect(audio(fb)).toEqual(audio(fa));
    expect(b.summary.duplex?.ttft_ms.count).toBe(a.summary.duplex?.ttft_ms.count);
    expect(b.summary.duplex?.ttfp_ms.count).toBe(4);
    expect(Math.abs((b.summary.duplex?.ttfp_ms.p50 ?? 0) - (a.summary.duplex?.ttfp_ms.p50 ?? 0))).toBeLessThan(50);
  });

  it('without turn detection, commits every --commit-every-s and asks for each response', async () => {
    const mock = await openaiMock({ profile: 'model', model: { ttfp_ms: 50, rtf: 0.2, turn_every_s: 60 } });
    const { code, summary, dir } = await probe(mock.url, [
      '--protocol', 'openai', '--turn-detection', 'none', '--commit-every-s', '0.4', '--concurrency', '2', '--duration', '1.2', '--trace', 'full', '--keep-traces',
    ]);
    expect(code).toBe(0);
    expect(summary.sessions.completed).toBe(2);
    const lines = await traceOf(dir, 's0');
    const sent = lines.filter((l) => l.direction === 'send').map((l) => l.event.type);
    // A commit and a response.create after every 5th append.
    const commits = sent.flatMap((t, i) => (t === 'input_audio_buffer.commit' ? [sent.slice(0, i).filter((x) => x === 'input_audio_buffer.append').length] : []));
    expect(commits).toEqual([5, 10, 15]);
    expect(sent.filter((t) => t === 'response.create')).toHaveLength(3);
    const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    const responses = duplex.duplex_session_metrics[0].responses as Array<{ audio_duration_ms: number }>;
    expect(responses.map((r) => Math.round(r.audio_duration_ms))).toEqual([400, 400, 400]);
  });

  it('sends no response.create while a response is active: the one asked for meanwhile goes after response.done, and the end waits for it', async () => {
    // Each answer takes longer than the commit period (TTFP 700 ms, then 0.5 x real time), so creates must wait.
    const mock = await openaiMock({ profile: 'model', model: { ttfp_ms: 700, rtf: 0.5, turn_every_s: 60 } });
    const { code, summary, dir } = await probe(mock.url, [
      '--protocol', 'openai', '--turn-detection', 'none', '--commit-every-s', '0.4', '--concurrency', '2', '--duration', '1.6', '--trace', 'full', '--keep-traces',
    ]);
    expect(code).toBe(0);
    expect(summary.sessions).toMatchObject({ completed: 2, incomplete: 0 });
    // The mock refuses a create during a response as OpenAI does (conversation_already_has_active_response): none was refused.
    expect(summary.events.server_errors).toBe(0);
    for (const id of ['s0', 's1']) {
      const lines = await traceOf(dir, id);
      let active = 0;
      let creates = 0;
      for (const l of lines) {
        if (l.direction === 'receive' && l.event.type === 'response.created') active++;
        if (l.direction === 'receive' && l.event.type === 'response.done') active--;
        if (l.direction === 'send' && l.event.type === 'response.create') {
          expect(active).toBe(0);
          creates++;
        }
      }
      const commits = lines.filter((l) => l.direction === 'send' && l.event.type === 'input_audio_buffer.commit').length;
      expect(commits).toBe(4);
      // Fewer creates than commits (those asked for while one waited were folded into it), each answered before the session closed.
      expect(creates).toBeGreaterThan(1);
      expect(creates).toBeLessThan(commits);
      expect(lines.filter((l) => l.event.type === 'response.done')).toHaveLength(creates);
      // A create that waited went as the response before it was done.
      expect(lines.some((l, i) => l.event.type === 'response.create' && lines[i - 1]?.event.type === 'response.done')).toBe(true);
      expect(lines.at(-1)?.event.type).toBe('response.done');
    }
    // Every committed input was answered: 1.6 s of input owes 1.6 s of output.
    const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    for (const s of duplex.duplex_session_metrics) expect(s.stream_audio_duration_ms).toBeCloseTo(1600, 3);
  });

  it('asks for semantic VAD with --turn-detection semantic_vad and measures its turns as with server VAD', async () => {
    const mock = await openaiMock(MODEL);
    const { code, summary, dir } = await probe(mock.url, ['--protocol', 'openai', '--turn-detection', 'semantic_vad', '--concurrency', '1', '--duration', '1.6', '--trace', 'full', '--keep-traces']);
    expect(code).toBe(0);
    const lines = await traceOf(dir, 's0');
    expect(lines[1].event).toMatchObject({ type: 'session.update', session: { audio: { input: { turn_detection: { type: 'semantic_vad' } } } } });
    expect(lines[2].event).toMatchObject({ type: 'session.updated', session: { audio: { input: { turn_detection: { type: 'semantic_vad' } } } } });
    expect(lines.filter((l) => l.direction === 'send' && l.event.type === 'response.create')).toHaveLength(0);
    expect(summary.duplex?.responses).toBe(2);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.dialect).toMatchObject({ turn_detection: 'semantic_vad' });
  });

  it('counts events it does not know and goes on', async () => {
    const mock = await openaiMock({}, { after_appends: 3, action: 'unknown_event' });
    const { code, summary } = await probe(mock.url, ['--protocol', 'openai', '--concurrency', '2', '--duration', '0.8']);
    expect(code).toBe(0);
    expect(summary.sessions.completed).toBe(2);
    expect(summary.events.unknown).toEqual({ 'vendor.keepalive': 2 });
  });

  it('sends --api-key as a bearer header and writes it nowhere', async () => {
    const secret = 'sk-test-Zq81nWv4kT0pLm';
    const mock = await openaiMock(MODEL);
    const { code, dir, stdout, stderr } = await probe(mock.url, [
      '--protocol', 'openai', '--api-key', secret, '--concurrency', '2', '--duration', '0.8', '--trace', 'full', '--keep-traces',
    ]);
    expect(code).toBe(0);
    // Every upgrade carried it: the two sessions, and the one that read session.created for the packet size.
    expect(mock.stats().sessions).toMatchObject({ opened: 3, with_bearer: 3 });
    const files = await filesUnder(dir);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect((await readFile(file)).includes(secret)).toBe(false);
    expect(stdout + stderr).not.toContain(secret);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.command).toContain('[redacted]');
    expect(run.dialect.bearer_key_sent).toBe(true);
  });

  it("reads vLLM-Omni's extensions: chunk_period_ms sets the packet, server_event_seq gaps are counted, server metrics are the named origin", async () => {
    const mock = await openaiMock({ ...MODEL, unit_ms: 160, openai: { ...MODEL.openai, vllm: true } }, { after_appends: 4, action: 'skip_event_seq' });
    const { code, summary, dir, stderr, stdout } = await probe(mock.url, ['--protocol', 'openai', '--concurrency', '2', '--duration', '1.6', '--trace', 'full', '--keep-traces']);
    expect(code).toBe(0);
    // A server with vLLM-Omni's extensions is asked to close the session: a plain disconnect would hold its slot.
    const lines = (await readFile(join(dir, 'sessions', 's0', 'trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.direction === 'send').at(-1).event.type).toBe('session.close');
    expect(lines.at(-1).event.type).toBe('session.closed');
    expect(stderr).toContain("160 ms, the server's chunk_period_ms");
    expect(stdout).toContain('server, its own clock from its request start: TTFP p50');
    expect(stdout).toContain('client, from response.created as received: TTFP p50');
    expect(summary.packet_ms).toBe(160);
    expect(summary.packets.sent).toBe(2 * 10);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(run.layout).toMatchObject({ packet_ms: 160, packet_ms_source: 'session.created.capabilities.chunk_period_ms' });
    expect(summary.events.server_event_seq).toEqual({ sessions: 2, gaps: 2, missing_events: 2, not_rising: 0 });
    const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
    const responses = duplex.duplex_session_metrics.flatMap((s: { responses: unknown[] }) => s.responses);
    expect(responses.length).toBe(4);
    for (const r of responses) {
      expect(r.server_measurement_origin).toMatchObject({ ttfp: 'mock turn start to first audio delta' });
      expect(r).toMatchObject({ ttfp_origin: 'server response_request_metrics', ttft_origin: 'server response_request_metrics' });
      expect(r.ttfp_ms).toBeGreaterThanOrEqual(99);
      expect(typeof r.client_ttfp_ms).toBe('number');
    }
    // Server- and client-origin figures are pooled apart, each with its count.
    expect(summary.duplex?.measurement_origin.server_ttfp_ms).toContain('server clock');
    expect(summary.duplex?.server_ttfp_ms?.count).toBe(4);
    expect(summary.duplex?.ttfp_ms.count).toBe(4);
  });

  it('sends no session.close to a server without vLLM-Omni\'s extensions (OpenAI has no such event)', async () => {
    const mock = await openaiMock({});
    const { code, dir } = await probe(mock.url, ['--protocol', 'openai', '--concurrency', '1', '--duration', '0.8', '--trace', 'full', '--keep-traces']);
    expect(code).toBe(0);
    const text = await readFile(join(dir, 'sessions', 's0', 'trace.jsonl'), 'utf8');
    expect(text).not.toContain('"session.close"');
  });

  it('with --packet-ms given, keeps it whatever the server announces', async () => {
    const mock = await openaiMock({ unit_ms: 160, openai: { vllm: true } });
    const { code, summary } = await probe(mock.url, ['--protocol', 'openai', '--packet-ms', '80', '--concurrency', '1', '--duration', '0.8']);
    expect(code).toBe(0);
    expect(summary.packet_ms).toBe(80);
    expect(summary.packets.sent).toBe(10);
  });
});

// A server that stops answering, closes after an error, or refuses session.update with an error:
// specced in virtual time (libs/session/src/openai-faults.spec.ts).
describe('probe run --protocol openai, servers that misbehave', () => {
  it("ends within the handshake bound against a server that waits for the client to speak first (vLLM-Omni's duplex endpoint), naming --protocol vllm-omni", async () => {
    const mock = await openaiMock({ openai: { flavor: 'vllm-omni' } });
    const hint = "this server waits for the client to speak first, as vLLM-Omni's duplex endpoint does; try --protocol vllm-omni";
    // The look at session.created for the packet size meets it first.
    let t0 = Date.now();
    let stderr = '';
    const io: RunIo = {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s), isTTY: false },
      signals: new EventEmitter(),
      exitNow: (code) => {
        throw new Error(`exitNow(${code}) in a test`);
      },
      argv: [],
    };
    const out = await mkdtemp(join(tmpdir(), 'probe-run-'));
    const flags = ['--url', mock.url, '--output', out, '--quiet', '--protocol', 'openai', '--concurrency', '1', '--duration', '0.8', '--connect-timeout-s', '1'];
    expect(await runCommand(parseRunOptions(flags), io)).toBe(1);
    expect(stderr).toBe(`error: no session.created within 1 s: ${hint}\n`);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // With --packet-ms there is no such look: every session ends at its handshake with the same words.
    t0 = Date.now();
    const given = await probe(mock.url, ['--protocol', 'openai', '--packet-ms', '80', '--concurrency', '2', '--duration', '0.8', '--connect-timeout-s', '1']);
    expect(given.code).toBe(1);
    expect(given.summary.sessions).toMatchObject({ started: 2, completed: 0, incomplete_reasons: { handshake_timeout: 2 } });
    const sessions = await readFile(join(given.dir, 'sessions.jsonl'), 'utf8');
    expect(sessions).toContain(hint);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

});
