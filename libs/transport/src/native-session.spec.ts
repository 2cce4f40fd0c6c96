import { from, lastValueFrom, map, toArray } from 'rxjs';
// A test-only edge: the real append-echo mock is the handshake's counterpart. Shipped transport
// code still may not import mock-servers; the boundary rule has no spec-file exemption to use instead.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { nativeAppend, nativeError, nativeSessionCreated, nativeSessionUpdated, defaultNativeGrant, ProtocolError } from '@duplex-bench/protocol';
import { WsConnection } from './connection';
import { TransportError } from './errors';
import { failOnFatalServerError, nativeEndSession, nativeHandshake } from './native-session';
import { sendOn, type OutgoingFrame } from './send-on';
import { startWsTestServer, streamEnd, within, type TestServer } from './test-servers.spec-helpers';

const BOUND_MS = 3000;
const FULL = Buffer.alloc(2560).toString('base64');
const SHORT = Buffer.alloc(640).toString('base64');

describe('native session flow', () => {
  let server: TestServer | MockServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
    conn = undefined;
    server = undefined;
  });

  it('runs handshake, appends and end of session against the append-echo mock, and returns the drain figures', async () => {
    const mock = await startMockServer({ port: 0 });
    server = mock;
    const c = WsConnection.open(mock.url, { session_id: 's1' });
    conn = c;
    const ended = streamEnd(c.events$, BOUND_MS);
    const fatal = failOnFatalServerError(c);
    const sent: Array<{ type: string; sent_s: number }> = [];
    const onSend = (frame: string, sent_s: number) => sent.push({ type: JSON.parse(frame).type, sent_s });

    const grant = await within(nativeHandshake(c, 's1_update', { input_sample_rate: 16000 }, { onSend, handshake_timeout_ms: BOUND_MS }), BOUND_MS, 'handshake');
    expect(grant).toMatchObject({
      native_unit_ms: 80,
      tail_policy: 'pad',
      input_audio_format: { type: 'pcm16', sample_rate: 16000, channels: 1 },
      output_audio_format: { type: 'pcm16', sample_rate: 22050, channels: 1 },
    });

    // Two whole packets and a short last one: 180 ms of input, padded to 240.
    const receipts = await lastValueFrom(
      from([FULL, FULL, SHORT]).pipe(
        map((audio, seq): OutgoingFrame => ({ seq, event_id: `s1_append_${seq}`, frame: nativeAppend(`s1_append_${seq}`, seq, seq * 80, audio), scheduled_s: 0, start_s: 0 })),
        sendOn(c),
        toArray(),
      ),
    );
    expect(receipts).toHaveLength(3);

    const drain = await within(nativeEndSession(c, { end: 's1_end', close: 's1_close' }, { onSend }), BOUND_MS, 'end of session');
    expect(drain).toEqual({ accepted_end_ms: 180, consumed_ms: 240, discarded_ms: 0, padding_ms: 60 });
    expect(sent.map((s) => s.type)).toEqual(['session.update', 'sglang.input_audio.end', 'session.close']);
    for (const s of sent) expect(s.sent_s).toBeGreaterThan(0);

    const end = await ended;
    expect(end.completed).toBe(true);
    const types = end.values.map((e) => e.frame.type);
    expect(types[0]).toBe('session.created');
    expect(types.filter((t) => t === 'sglang.input_audio.accepted')).toHaveLength(3);
    expect(types.slice(-2)).toEqual(['sglang.input_audio.drained', 'session.closed']);
    expect(c.isOpen).toBe(false);
    expect(mock.stats().sessions).toMatchObject({ opened: 1, completed: 1 });
    fatal.unsubscribe();
  });

  it('fails the handshake as handshake_timeout when the server never sends session.created', async () => {
    server = await startWsTestServer(() => () => undefined);
    conn = WsConnection.open(server.url);
    const error = await within(
      nativeHandshake(conn, 'u', { input_sample_rate: 16000 }, { handshake_timeout_ms: 200 }).catch((e: unknown) => e),
      BOUND_MS,
      'handshake',
    );
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'handshake_timeout' });
  });

  it('fails the handshake as handshake_timeout when session.updated never comes', async () => {
    server = await startWsTestServer(() => (ws) => ws.send(nativeSessionCreated('x')));
    conn = WsConnection.open(server.url);
    const error = await within(
      nativeHandshake(conn, 'u', { input_sample_rate: 16000 }, { handshake_timeout_ms: 200 }).catch((e: unknown) => e),
      BOUND_MS,
      'handshake',
    );
    expect(error).toMatchObject({ reason: 'handshake_timeout' });
  });

  it('fails the handshake with the open error when the server refuses the session', async () => {
    server = await startWsTestServer(() => 503);
    conn = WsConnection.open(server.url, { retry_delay_ms: 5 });
    const error = await within(nativeHandshake(conn, 'u', { input_sample_rate: 16000 }).catch((e: unknown) => e), BOUND_MS, 'handshake');
    expect(error).toMatchObject({ reason: 'admission_refused' });
  });

  it('fails the end of session as drain_timeout when drained never comes', async () => {
    server = await startWsTestServer(() => (ws) => {
      ws.send(nativeSessionCreated('x'));
      ws.on('message', (data: Buffer) => {
        if (JSON.parse(data.toString()).type === 'session.update') ws.send(nativeSessionUpdated('x', defaultNativeGrant(16000, 22050, 80)));
      });
    });
    conn = WsConnection.open(server.url);
    await within(nativeHandshake(conn, 'u', { input_sample_rate: 16000 }), BOUND_MS, 'handshake');
    const error = await within(nativeEndSession(conn, { end: 'e', close: 'c' }, { drain_timeout_ms: 200 }).catch((e: unknown) => e), BOUND_MS, 'end');
    expect(error).toMatchObject({ reason: 'drain_timeout' });
  });

  it('ends the session on a fatal server error and lets a non-fatal one pass', async () => {
    server = await startWsTestServer(() => (ws) => {
      ws.send(nativeError('slow', 'falling behind', false));
      ws.send('{"type":"response.created"}');
      ws.send(nativeError('crashed', 'the model died', true));
      ws.send('{"type":"never.seen"}');
    });
    conn = WsConnection.open(server.url);
    const ended = streamEnd(conn.events$, BOUND_MS);
    const subscription = failOnFatalServerError(conn);
    const end = await ended;
    expect(end.values.map((e) => e.frame.type)).toEqual(['error', 'response.created', 'error']);
    expect(end.error).toBeInstanceOf(ProtocolError);
    expect(end.error).toMatchObject({ code: 'SERVER_ERROR', info: { server_code: 'crashed', fatal: true } });
    subscription.unsubscribe();
  });
});
