import { stampSent } from '@duplex-bench/protocol';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import { FakeServer } from './fake-server';
import type { TransportError } from './errors';

describe('FakeServer', () => {
  it('accepts an upgrade, carries frames both ways on the virtual clock, and closes with a close handshake', async () => {
    const time = new VirtualTime();
    const server = new FakeServer(time, () => ({ accept: (side) => side.onMessage((e) => side.send({ type: 'echo', of: e.type }, 40)) }));
    const conn = server.connect('ws://fake/x', { headers: { authorization: 'Bearer k' } });
    const got: Array<[string, number]> = [];
    conn.events$.subscribe((e) => got.push([String(e.frame.type), e.received_s]));
    await time.run(conn.opened);
    conn.send('{"type":"ping"}');
    await time.advance(100);
    expect(got).toEqual([['echo', expect.closeTo(0.04, 6)]]);
    expect(server.sessions[0].received).toEqual([{ type: 'ping' }]);
    expect(server.upgrades).toEqual([{ url: 'ws://fake/x', headers: { authorization: 'Bearer k' } }]);
    await time.run(conn.close(1000));
    expect(server.sessions[0].clientClose).toEqual({ code: 1000, reason: 'done' });
    expect(conn.isOpen).toBe(false);
  });

  it('refuses with an HTTP status as ws reports it, and a server that never answers runs into the connect bound', async () => {
    const time = new VirtualTime();
    const server = new FakeServer(time, (n) => (n === 0 ? { refuse: 503 } : 'hang'));
    const refused = server.connect('ws://fake/x', {});
    const e1 = (await time.run(refused.opened.catch((e: unknown) => e))) as TransportError;
    expect(e1).toMatchObject({ reason: 'connect_failed', info: { status: 503 } });
    const hung = server.connect('ws://fake/x', { connect_timeout_ms: 2000 });
    const t0 = time.now;
    const e2 = (await time.run(hung.opened.catch((e: unknown) => e))) as TransportError;
    expect(e2.reason).toBe('connect_timeout');
    expect(time.now - t0).toBeCloseTo(2000, 3);
  });

  it('gives each stamped frame its receive delay on the clock the frame was stamped on, and none for a frame without a stamp', async () => {
    const time = new VirtualTime();
    // The server stamps each frame 5 ms after the clock it sends on; delivered 40 ms after sending.
    const server = new FakeServer(time, () => ({ accept: (side) => side.onMessage(() => {
      side.send(stampSent('{"type":"echo"}', time.now - 5), 40);
      side.send('{"type":"plain"}', 40);
    }) }));
    const delays: number[] = [];
    const conn = server.connect('ws://fake/x', { on_sent_stamp: (ms) => delays.push(ms) });
    const types: string[] = [];
    conn.events$.subscribe((e) => types.push(String(e.frame.type)));
    await time.run(conn.opened);
    conn.send('{"type":"ping"}');
    await time.advance(100);
    expect(types).toEqual(['echo', 'plain']);
    expect(delays).toEqual([expect.closeTo(45, 3)]);
  });

  it("a client's bufferedAmount is what the server side sets, and a close the server never answers is dropped at the bound", async () => {
    const time = new VirtualTime();
    const server = new FakeServer(time, () => ({ accept: () => undefined }));
    const conn = server.connect('ws://fake/x', {});
    await time.run(conn.opened);
    const side = server.sessions[0];
    side.buffered = 4096;
    expect(conn.bufferedAmount).toBe(4096);
    side.answersClose = false;
    const t0 = time.now;
    await time.run(conn.close(1500));
    expect(side.terminated).toBe(true);
    expect(time.now - t0).toBeCloseTo(1500, 3);
  });
});
