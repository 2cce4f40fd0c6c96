import { ManualTimers } from '@duplex-bench/pacer/testing';
import { firstValueFrom } from 'rxjs';
import { WsConnection } from './connection';
import { TransportError } from './errors';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';
import { waitForQuiet } from './wait-quiet';

const BOUND_MS = 3000;

describe('waitForQuiet', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;
  let send: ((frame: string) => void) | undefined;
  const timers = new ManualTimers();

  beforeEach(async () => {
    timers.pending = [];
    server = await startWsTestServer(() => (ws) => (send = (frame) => ws.send(frame)));
    conn = WsConnection.open(server.url, { timers });
    await within(conn.opened, BOUND_MS, 'opened');
  });

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
    conn = undefined;
    server = undefined;
  });

  const delays = (): number[] => timers.pending.map((t) => t.delay_ms).sort((a, b) => a - b);

  it('resolves once idle for quiet_ms; each event restarts the quiet wait', async () => {
    const c = conn as WsConnection;
    let done = false;
    const waiting = waitForQuiet(c, { idle: () => true, busy: () => 'nothing', quiet_ms: 300, drain_ms: 5000, session_id: 's' }).then(() => (done = true));
    expect(delays()).toEqual([300, 5000]);
    const quiet = timers.pending.find((t) => t.delay_ms === 300);
    const arrived = firstValueFrom(c.events$);
    send?.('{"type":"response.done"}');
    await within(arrived, BOUND_MS, 'event');
    // The event cancelled the first quiet wait and armed a fresh one.
    expect(timers.pending).not.toContain(quiet);
    expect(delays()).toEqual([300, 5000]);
    expect(done).toBe(false);
    timers.pending.find((t) => t.delay_ms === 300)?.fn();
    await within(waiting, BOUND_MS, 'quiet');
    expect(done).toBe(true);
    // The drain bound is cancelled with it.
    expect(timers.pending).toEqual([]);
  });

  it('fails as drain_timeout naming what is still busy when the drain bound fires first', async () => {
    const c = conn as WsConnection;
    const waiting = waitForQuiet(c, { idle: () => false, busy: () => '1 response open', quiet_ms: 300, drain_ms: 5000, session_id: 's' }).catch((e: unknown) => e);
    // Never idle: no quiet wait is armed, only the bound.
    expect(delays()).toEqual([5000]);
    timers.fire();
    const error = await within(waiting, BOUND_MS, 'drain');
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'drain_timeout', info: { session_id: 's' } });
    expect((error as Error).message).toBe('server not done within 5000 ms (1 response open)');
  });
});
