/**
 * Clients nobody here wrote drive the openai mock: if they accept its events, the mock speaks the
 * dialect as OpenAI's own SDKs read it, and the probe's openai tests stand on a sound peer.
 */
import { OpenAIRealtimeWebSocket } from '@openai/agents-realtime';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { startMockServer, type MockServer } from '../src/index';
import { selfSignedCert } from '../src/testing';

jest.setTimeout(30_000);

/** `ms` of 24 kHz PCM16 silence. */
const pcm24k = (ms: number) => new ArrayBuffer(48 * ms);

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    }),
  ]);
}

describe('independent clients against the openai mock', () => {
  let server: MockServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it("@openai/agents-realtime's OpenAIRealtimeWebSocket connects over ws://, updates the session, sends audio and receives output audio", async () => {
    server = await startMockServer({ port: 0, protocol: 'openai', openai: { silence_ms: 200 } });
    const transport = new OpenAIRealtimeWebSocket();
    const seen: string[] = [];
    transport.on('*', (event: { type: string }) => seen.push(event.type));
    const audio: Array<{ bytes: number; responseId: string }> = [];
    const gotAudio = new Promise<void>((resolve) => {
      transport.on('audio', (e: { data: ArrayBuffer; responseId: string }) => {
        audio.push({ bytes: e.data.byteLength, responseId: e.responseId });
        if (audio.length === 10) resolve();
      });
    });
    const errors: unknown[] = [];
    transport.on('error', (e: unknown) => errors.push(e));

    await within(transport.connect({ apiKey: 'test-key', url: server.url, model: 'duplex-bench-mock' }), 10_000, 'connected');
    for (let i = 0; i < 10; i++) transport.sendAudio(pcm24k(80));
    await within(gotAudio, 10_000, '10 audio deltas');
    transport.close();

    expect(errors).toEqual([]);
    expect(seen.slice(0, 2)).toEqual(['session.created', 'session.updated']);
    // Ten 80 ms packets at 24 kHz owe ten 80 ms units of 24 kHz output, all in one response.
    expect(audio.every((a) => a.bytes === 3840)).toBe(true);
    expect(new Set(audio.map((a) => a.responseId)).size).toBe(1);
    expect(server.stats().sessions.with_bearer).toBe(1);
  });

  it("the openai package's OpenAIRealtimeWS drives it over wss:// with a self-signed certificate", async () => {
    const tls = await selfSignedCert();
    server = await startMockServer({ port: 0, protocol: 'openai', tls });
    const client = new OpenAI({ apiKey: 'test-key', baseURL: `https://127.0.0.1:${server.port}/v1` });
    const rt = new OpenAIRealtimeWS({ model: 'duplex-bench-mock', options: { ca: tls.cert } }, client);
    expect(rt.url.toString().startsWith(`wss://127.0.0.1:${server.port}/v1/realtime`)).toBe(true);
    const errors: unknown[] = [];
    rt.on('error', (e) => errors.push(e));
    let audioBytes = 0;
    rt.on('response.output_audio.delta', (e) => {
      audioBytes += Buffer.from(e.delta, 'base64').length;
    });
    rt.on('session.created', () =>
      rt.send({ type: 'session.update', session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: null } } } }),
    );
    rt.on('session.updated', () => {
      for (let i = 0; i < 5; i++) rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm24k(80)).toString('base64') });
      rt.send({ type: 'input_audio_buffer.commit' });
      rt.send({ type: 'response.create' });
    });
    const done = await within(new Promise<{ response: { id?: string; status?: string } }>((resolve) => rt.on('response.done', resolve)), 10_000, 'response.done');
    rt.close();

    expect(errors).toEqual([]);
    expect(done.response.status).toBe('completed');
    expect(audioBytes).toBe(5 * 3840);
    expect(server.stats().sessions.with_bearer).toBe(1);
  });
});
