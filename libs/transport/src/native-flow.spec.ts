import { from, lastValueFrom, map, toArray } from 'rxjs';
// A test-only edge: the real append-echo mock is the handshake's counterpart. Shipped transport
// code still may not import mock-servers; the boundary rule has no spec-file exemption to use instead.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { nativeAppend, nativeError, nativeGrant, nativeSessionClosed, nativeSessionCreated, nativeSessionUpdated, ProtocolError, readNativeGrant, type NativeLimits } from '@duplex-bench/protocol';
import { WsConnection } from './connection';
import { TransportError } from './errors';
import { NativeFlow, nativeEndSession, nativeHandshake } from './native-flow';
import { sendOn, type OutgoingFrame } from './send-on';
import { startWsTestServer, streamEnd, within, type TestServer } from './test-servers.spec-helpers';

const BOUND_MS = 3000;
const FULL = Buffer.from(Buffer.alloc(2560).toString('base64'));
const SHORT = Buffer.from(Buffer.alloc(640).toString('base64'));
const LIMITS = { session_timeout_s: 60 } as unknown as NativeLimits;
const created = () => nativeSessionCreated('e0', 'x');
const updated = (client_event_id: string, rate = 22050, unit = 80) => nativeSessionUpdated('e1', client_event_id, 'x', nativeGrant(rate, unit, LIMITS));
/** Resolves once `done()` holds, checked every 10 ms (bounded by the caller's `within`). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 10));
}
const update_id = (data: Buffer) => JSON.parse(data.toString()) as { type: string; event_id: string };

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
    const sent: Array<{ type: string; sent_s: number }> = [];
    const onSend = (frame: string, sent_s: number) => sent.push({ type: JSON.parse(frame).type, sent_s });

    const event = await within(nativeHandshake(c, 's1_update', { onSend, handshake_timeout_ms: BOUND_MS }), BOUND_MS, 'handshake');
    expect(event.client_event_id).toBe('s1_update');
    expect(readNativeGrant(event)).toEqual({ output_sample_rate: 22050, native_unit_ms: 80, input_modalities: ['audio'] });

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
    expect(drain).toEqual({ accepted_end_ms: 180, consumed_ms: 180, discarded_ms: 0, padding_ms: 60 });
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
  });

  it('fails the handshake as handshake_timeout when the server never sends session.created', async () => {
    server = await startWsTestServer(() => () => undefined);
    conn = WsConnection.open(server.url);
    const error = await within(
      nativeHandshake(conn, 'u', { handshake_timeout_ms: 200 }).catch((e: unknown) => e),
      BOUND_MS,
      'handshake',
    );
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'handshake_timeout' });
  });

  it('fails the handshake as handshake_timeout when session.updated never comes', async () => {
    server = await startWsTestServer(() => (ws) => ws.send(created()));
    conn = WsConnection.open(server.url);
    const error = await within(
      nativeHandshake(conn, 'u', { handshake_timeout_ms: 200 }).catch((e: unknown) => e),
      BOUND_MS,
      'handshake',
    );
    expect(error).toMatchObject({ reason: 'handshake_timeout' });
  });

  it('fails the handshake with the open error when the server refuses the session', async () => {
    server = await startWsTestServer(() => 503);
    conn = WsConnection.open(server.url);
    const error = await within(nativeHandshake(conn, 'u').catch((e: unknown) => e), BOUND_MS, 'handshake');
    expect(error).toMatchObject({ reason: 'connect_failed', info: { status: 503 } });
  });

  it('fails the end of session as drain_timeout when drained never comes', async () => {
    server = await startWsTestServer(() => (ws) => {
      ws.send(created());
      ws.on('message', (data: Buffer) => {
        const e = update_id(data);
        if (e.type === 'session.update') ws.send(updated(e.event_id));
      });
    });
    conn = WsConnection.open(server.url);
    await within(nativeHandshake(conn, 'u'), BOUND_MS, 'handshake');
    const error = await within(nativeEndSession(conn, { end: 'e', close: 'c' }, { drain_timeout_ms: 200 }).catch((e: unknown) => e), BOUND_MS, 'end');
    expect(error).toMatchObject({ reason: 'drain_timeout' });
  });

  it('says the server closed the session during the handshake when it closes before session.updated', async () => {
    server = await startWsTestServer(() => (ws) => {
      ws.send(created());
      ws.on('message', () => ws.close(1011, 'going away'));
    });
    conn = WsConnection.open(server.url);
    const error = await within(nativeHandshake(conn, 'u').catch((e: unknown) => e), BOUND_MS, 'handshake');
    expect(error).toMatchObject({ reason: 'server_closed' });
    expect((error as Error).message).toContain('the server closed the session during the handshake');
  });

  it('stops waiting for drained at a server error, fatal or not', async () => {
    server = await startWsTestServer(() => (ws) => {
      ws.send(created());
      ws.on('message', (data: Buffer) => {
        const e = update_id(data);
        if (e.type === 'session.update') ws.send(updated(e.event_id));
        if (e.type === 'sglang.input_audio.end') ws.send(nativeError('e2', 'busy', 'try later', false));
      });
    });
    conn = WsConnection.open(server.url);
    await within(nativeHandshake(conn, 'u'), BOUND_MS, 'handshake');
    const error = await within(nativeEndSession(conn, { end: 'e', close: 'c' }, { drain_timeout_ms: 2000 }).catch((e: unknown) => e), BOUND_MS, 'end');
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: 'SERVER_ERROR', info: { server_code: 'busy', fatal: false } });
  });

  it.each([
    [false, ['session.close']],
    [true, []],
  ])('after a server error (fatal %s) sends %j, waits for session.closed and closes with a close frame', async (fatal, expected) => {
    let closeCode = 0;
    server = await startWsTestServer(() => (ws) => {
      ws.on('message', (data: Buffer) => {
        const e = update_id(data);
        if (e.type === 'session.close') ws.send(nativeSessionClosed('e9', e.event_id));
      });
      ws.on('close', (code: number) => (closeCode = code));
      ws.send(created());
      if (fatal) setTimeout(() => ws.send(nativeSessionClosed('e8', null, 'error')), 50);
    });
    const c = WsConnection.open(server.url);
    conn = c;
    await c.opened;
    const sent: string[] = [];
    const error = new ProtocolError('SERVER_ERROR', 'x', { fatal });
    await within(new NativeFlow('s').abort(c, error, { onSend: (frame) => sent.push(JSON.parse(frame).type), close_timeout_ms: 1000 }), BOUND_MS, 'abort');
    expect(sent).toEqual(expected);
    await within(until(() => closeCode !== 0), BOUND_MS, 'close frame');
    // 1000: the client sent a close frame; 1006 would mean it dropped the socket.
    expect(closeCode).toBe(1000);
  });

  it('fails a connection with a close frame, not by dropping it: the server sees 1000', async () => {
    let closeCode = 0;
    server = await startWsTestServer(() => (ws) => ws.on('close', (code: number) => (closeCode = code)));
    const c = WsConnection.open(server.url);
    conn = c;
    await c.opened;
    const ended = streamEnd(c.events$, BOUND_MS);
    c.fail(new TransportError('drain_timeout', 'no drained'));
    expect((await ended).error).toMatchObject({ reason: 'drain_timeout' });
    await within(until(() => closeCode !== 0), BOUND_MS, 'close frame');
    expect(closeCode).toBe(1000);
  });

  it('gives up waiting for session.closed after the close timeout, as close_timeout', async () => {
    server = await startWsTestServer(() => (ws) => ws.send(created()));
    const c = WsConnection.open(server.url);
    conn = c;
    await c.opened;
    const error = await within(
      new NativeFlow('s').abort(c, new ProtocolError('SERVER_ERROR', 'x', { fatal: true }), { close_timeout_ms: 200 }).catch((e: unknown) => e),
      BOUND_MS,
      'abort',
    );
    expect(error).toMatchObject({ reason: 'close_timeout' });
  });
});
