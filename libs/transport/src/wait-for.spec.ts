import { ManualTimers } from '@duplex-bench/pacer/testing';
import { firstValueFrom } from 'rxjs';
import { WsConnection } from './connection';
import { TransportError } from './errors';
import { waitForEvent } from './wait-for';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';

const BOUND_MS = 3000;

describe('waitForEvent', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
    conn = undefined;
    server = undefined;
  });

  it('resolves with the next event of the type, skipping others', async () => {
    server = await startWsTestServer(() => (ws) => {
      ws.send('{"type":"response.created"}');
      ws.send('{"type":"session.created","n":1}');
      ws.send('{"type":"session.created","n":2}');
    });
    conn = WsConnection.open(server.url);
    const event = await within(waitForEvent(conn, 'session.created', BOUND_MS, 'handshake_timeout'), BOUND_MS, 'wait');
    expect(event.frame.event()).toEqual({ type: 'session.created', n: 1 });
    expect(typeof event.received_s).toBe('number');
  });

  it("rejects with a TransportError of the given reason when the type does not come in time, bounded on the connection's timers", async () => {
    let send: ((frame: string) => void) | undefined;
    server = await startWsTestServer(() => (ws) => (send = (frame) => ws.send(frame)));
    const timers = new ManualTimers();
    conn = WsConnection.open(server.url, { timers });
    await within(conn.opened, BOUND_MS, 'opened');
    let settled = false;
    const waiting = waitForEvent(conn, 'sglang.input_audio.drained', 100, 'drain_timeout').catch((e: unknown) => e).finally(() => (settled = true));
    const arrived = firstValueFrom(conn.events$);
    send?.('{"type":"session.created"}');
    await within(arrived, BOUND_MS, 'session.created');
    // Other events do not end the wait; only the bound does, when its timer fires.
    expect(settled).toBe(false);
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([100]);
    timers.fire();
    const error = await within(waiting, BOUND_MS, 'wait');
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'drain_timeout', info: { url: server.url } });
    expect((error as Error).message).toContain('sglang.input_audio.drained');
    // A wait that times out does not end the session.
    expect(conn.isOpen).toBe(true);
  });

  it('rejects as server_closed when the session closes cleanly before the type comes', async () => {
    server = await startWsTestServer(() => () => undefined);
    conn = WsConnection.open(server.url);
    await within(conn.opened, BOUND_MS, 'opened');
    const waiting = waitForEvent(conn, 'session.closed', BOUND_MS, 'close_timeout').catch((e: unknown) => e);
    await conn.close(500);
    const error = await within(waiting, BOUND_MS, 'wait');
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'server_closed' });
  });

  it("rejects with the session's own error when it breaks meanwhile", async () => {
    server = await startWsTestServer(() => (ws) => ws.close(1001, 'going away'));
    conn = WsConnection.open(server.url);
    const error = await within(waitForEvent(conn, 'session.created', BOUND_MS, 'handshake_timeout').catch((e: unknown) => e), BOUND_MS, 'wait');
    expect(error).toMatchObject({ reason: 'server_closed', info: { close_code: 1001, close_reason: 'going away' } });
  });
});
