import WebSocket from 'ws';
import { startMockServer, type MockServer, type MockServerOptions } from './mock-server';

jest.setTimeout(30_000);

type Event = Record<string, unknown> & { type: string };

/** A raw client: sends what it is given, collects every event, resolves when `until` says so. */
class Client {
  readonly events: Event[] = [];
  private readonly ws: WebSocket;
  private waiters: Array<{ until: (e: Event) => boolean; resolve: (e: Event) => void }> = [];
  readonly opened: Promise<void>;

  constructor(url: string, headers?: Record<string, string>) {
    this.ws = new WebSocket(url, { headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as Event;
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => !(w.until(event) && (w.resolve(event), true)));
    });
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(event));
  }

  next(until: (e: Event) => boolean, timeout_ms = 10_000): Promise<Event> {
    const seen = this.events.find(until);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching event within ${timeout_ms} ms; got ${this.events.map((e) => e.type).join(', ')}`)), timeout_ms);
      this.waiters.push({
        until,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  close(): void {
    this.ws.close(1000);
  }
}

const of = (type: string) => (e: Event) => e.type === type;
/** 80 ms of 16 kHz PCM16. */
const PACKET = Buffer.alloc(2560).toString('base64');

async function session(server: MockServer, session: Record<string, unknown>): Promise<Client> {
  const c = new Client(server.url);
  await c.next(of('session.created'));
  c.send({ type: 'session.update', event_id: 'u1', session });
  await c.next(of('session.updated'));
  return c;
}

const pcm16k = (turn_detection: unknown) => ({ type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 16000 }, turn_detection } } });

describe('openai mock', () => {
  const servers: MockServer[] = [];
  const start = async (o: MockServerOptions = {}) => {
    const s = await startMockServer({ port: 0, protocol: 'openai', ...o });
    servers.push(s);
    return s;
  };
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it('greets with a realtime session, applies session.update, and gives every event an event_id', async () => {
    const server = await start();
    const c = await session(server, pcm16k(null));
    const [created, updated] = c.events;
    expect(created).toMatchObject({ type: 'session.created', session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 24000 } } } } });
    expect(updated).toMatchObject({ type: 'session.updated', session: { audio: { input: { format: { rate: 16000 }, turn_detection: null }, output: { format: { rate: 24000 } } } } });
    expect(c.events.every((e) => typeof e.event_id === 'string')).toBe(true);
    c.close();
  });

  it('refuses a non-PCM format and a wrong session type with error events, and stays open', async () => {
    const server = await start();
    const c = await session(server, pcm16k(null));
    c.send({ type: 'session.update', event_id: 'u2', session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcmu' } } } } });
    expect(await c.next(of('error'))).toMatchObject({ error: { code: 'unsupported_audio_format', event_id: 'u2' } });
    c.send({ type: 'session.update', event_id: 'u3', session: { type: 'transcription' } });
    expect(await c.next((e) => e.type === 'error' && (e.error as { event_id?: string }).event_id === 'u3')).toBeDefined();
    c.send({ type: 'input_audio_buffer.commit', event_id: 'c0' });
    expect(await c.next((e) => e.type === 'error' && (e.error as { code?: string }).code === 'input_audio_buffer_commit_empty')).toBeDefined();
    c.close();
  });

  it('without turn detection, answers response.create after a commit with a whole response owed by the committed audio', async () => {
    const server = await start();
    const c = await session(server, pcm16k(null));
    // 12.5 units: 12 whole ones and a tail that is owed one more.
    for (let i = 0; i < 12; i++) c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    c.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(1280).toString('base64') });
    c.send({ type: 'input_audio_buffer.commit', event_id: 'c1' });
    c.send({ type: 'response.create', event_id: 'r1' });
    const done = await c.next(of('response.done'));
    const types = c.events.map((e) => e.type).filter((t) => !t.startsWith('session.'));
    expect(types.slice(0, 4)).toEqual(['input_audio_buffer.committed', 'response.created', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-5)).toEqual(['response.output_audio.done', 'response.output_audio_transcript.done', 'response.content_part.done', 'response.output_item.done', 'response.done']);
    const audio = c.events.filter(of('response.output_audio.delta'));
    // 13 units of 80 ms, each 80 ms of 24 kHz PCM16 (3,840 bytes): output audio is conserved.
    expect(audio).toHaveLength(13);
    expect(audio.reduce((n, e) => n + Buffer.from(e.delta as string, 'base64').length, 0)).toBe(13 * 3840);
    const id = (done.response as { id: string }).id;
    expect(audio.every((e) => e.response_id === id)).toBe(true);
    c.close();
  });

  it('with server VAD, starts a turn on its own and ends it after a pause in the input', async () => {
    const server = await start({ openai: { silence_ms: 200 } });
    const c = await session(server, pcm16k({ type: 'server_vad' }));
    for (let i = 0; i < 5; i++) c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    await c.next(of('response.done'));
    const types = c.events.map((e) => e.type);
    const order = ['input_audio_buffer.speech_started', 'response.created', 'input_audio_buffer.speech_stopped', 'input_audio_buffer.committed', 'response.done'];
    const at = order.map((t) => types.indexOf(t));
    expect(at).not.toContain(-1);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(c.events.filter(of('response.output_audio.delta'))).toHaveLength(5);
    c.close();
  });

  it('with semantic VAD, states it back and finds turns as with server VAD', async () => {
    const server = await start({ openai: { silence_ms: 200 } });
    const c = await session(server, pcm16k({ type: 'semantic_vad' }));
    expect(c.events[1]).toMatchObject({ session: { audio: { input: { turn_detection: { type: 'semantic_vad', eagerness: 'auto' } } } } });
    for (let i = 0; i < 5; i++) c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    await c.next(of('response.done'));
    const types = c.events.map((e) => e.type);
    const order = ['input_audio_buffer.speech_started', 'response.created', 'input_audio_buffer.speech_stopped', 'input_audio_buffer.committed', 'response.done'];
    const at = order.map((t) => types.indexOf(t));
    expect(at).not.toContain(-1);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(c.events.filter(of('response.output_audio.delta'))).toHaveLength(5);
    c.close();
  });

  it('refuses response.create while a response is in progress, as OpenAI does, and takes it once that one is done', async () => {
    const server = await start({ profile: 'model', model: { ttfp_ms: 300, rtf: 0.5 } });
    const c = await session(server, pcm16k(null));
    for (let i = 0; i < 3; i++) c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    c.send({ type: 'input_audio_buffer.commit', event_id: 'c1' });
    c.send({ type: 'response.create', event_id: 'r1' });
    await c.next(of('response.created'));
    c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    c.send({ type: 'input_audio_buffer.commit', event_id: 'c2' });
    c.send({ type: 'response.create', event_id: 'r2' });
    const refused = await c.next(of('error'));
    // OpenAI names no event in this refusal.
    expect(refused.error).toMatchObject({ type: 'invalid_request_error', code: 'conversation_already_has_active_response', event_id: null });
    expect((refused.error as { message: string }).message).toContain('resp_0');
    await c.next(of('response.done'));
    c.send({ type: 'response.create', event_id: 'r3' });
    await c.next((e) => e.type === 'response.done' && (e.response as { id: string }).id !== 'resp_0');
    expect(c.events.filter(of('response.created'))).toHaveLength(2);
    expect(c.events.filter(of('error'))).toHaveLength(1);
    c.close();
  });

  it('with server VAD, takes a manual commit of what was appended since the last one, and refuses an empty one', async () => {
    // An independent GA client that streamed 4 s and committed got input_audio_buffer_commit_empty before.
    const server = await start({ openai: { silence_ms: 5000 }, model: { turn_every_s: 60 } });
    const c = await session(server, pcm16k({ type: 'server_vad' }));
    for (let i = 0; i < 50; i++) c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    c.send({ type: 'input_audio_buffer.commit', event_id: 'c1' });
    await c.next(of('input_audio_buffer.committed'));
    c.send({ type: 'input_audio_buffer.commit', event_id: 'c2' });
    const error = await c.next(of('error'));
    expect(error.error).toMatchObject({ code: 'input_audio_buffer_commit_empty', event_id: 'c2' });
    expect(c.events.filter(of('error'))).toHaveLength(1);
    c.close();
  });

  it('sends beta output names when asked', async () => {
    const server = await start({ openai: { names: 'beta' } });
    const c = await session(server, pcm16k(null));
    c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    c.send({ type: 'input_audio_buffer.commit' });
    c.send({ type: 'response.create' });
    await c.next(of('response.done'));
    const types = new Set(c.events.map((e) => e.type));
    expect(types.has('response.audio.delta') && types.has('response.audio_transcript.delta') && types.has('response.audio.done')).toBe(true);
    expect(types.has('response.output_audio.delta')).toBe(false);
    c.close();
  });

  it('with vLLM-Omni extensions, announces chunk_period_ms, numbers every event, and reports its own request metrics', async () => {
    const server = await start({ unit_ms: 160, openai: { vllm: true }, profile: 'model', model: { ttfp_ms: 50, rtf: 0.1 } });
    const c = await session(server, pcm16k(null));
    expect(c.events[0]).toMatchObject({ session: { capabilities: { chunk_period_ms: 160 } } });
    for (let i = 0; i < 4; i++) c.send({ type: 'input_audio_buffer.append', audio: PACKET });
    c.send({ type: 'input_audio_buffer.commit' });
    c.send({ type: 'response.create' });
    await c.next(of('response.done'));
    expect(c.events.map((e) => e.server_event_seq)).toEqual(c.events.map((_, i) => i + 1));
    const metered = c.events.filter((e) => (e.metadata as { vllm_omni?: unknown } | undefined)?.vllm_omni);
    expect(metered).toHaveLength(1);
    const m = (metered[0].metadata as { vllm_omni: { response_request_metrics: { ttft_ms: number; ttfp_ms: number } } }).vllm_omni.response_request_metrics;
    expect(m.ttfp_ms).toBeGreaterThanOrEqual(49);
    expect(m.ttft_ms).toBeGreaterThanOrEqual(m.ttfp_ms);
    // 4 packets of 80 ms are 2 units of 160 ms.
    expect(c.events.filter(of('response.output_audio.delta'))).toHaveLength(2);
    c.close();
  });

  it('serves wss:// with the certificate it is given', async () => {
    const { selfSignedCert } = await import('./testing');
    const tls = await selfSignedCert();
    const server = await start({ tls });
    expect(server.url.startsWith('wss://127.0.0.1:')).toBe(true);
    const c = new Client(server.url);
    // The test certificate is not trusted by default: the upgrade must fail...
    await expect(c.opened).rejects.toThrow();
    // ...and succeed when the client trusts it.
    const trusted = new WebSocket(server.url, { ca: tls.cert });
    const first = await new Promise<Event>((resolve, reject) => {
      trusted.once('message', (d) => resolve(JSON.parse(String(d))));
      trusted.once('error', reject);
    });
    expect(first.type).toBe('session.created');
    trusted.close();
  });
});
