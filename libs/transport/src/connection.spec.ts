import { firstValueFrom } from 'rxjs';
import { WebSocket } from 'ws';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import { ProtocolError, spliceFrame } from '@duplex-bench/protocol';
import { WsConnection } from './connection';
import { ReadBurst } from './read-burst';
import { TransportError } from './errors';
import {
  closedPortUrl,
  startSilentTcpServer,
  startWsTestServer,
  streamEnd,
  within,
  type TestServer,
} from './test-servers.spec-helpers';

const BOUND_MS = 3000;

/** A ws socket as ws makes it, reading through Node's stream: a wss: connection's, or any without a read buffer of its own. */
const streamSocket = (url: string, options: object) => new WebSocket(url, options as never);

async function openError(conn: WsConnection): Promise<TransportError> {
  const error = await within(
    conn.opened.then(
      () => {
        throw new Error('opened resolved');
      },
      (err: unknown) => err,
    ),
    BOUND_MS,
    'opened',
  );
  expect(error).toBeInstanceOf(TransportError);
  return error as TransportError;
}

/** Waits until `done()`, checking every 5 ms, for at most BOUND_MS. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited >= BOUND_MS) throw new Error(`${what}: not within ${BOUND_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Fires every timer armed so far: a spec's timers phase. */
function firePending(timers: ManualTimers): void {
  for (let n = timers.pending.length; n > 0; n--) timers.fire();
}

/** The net.Socket under a connection's ws. */
function socketOf(conn: WsConnection): { readableLength: number; destroy(): void } {
  return (conn as unknown as { ws: { _socket: { readableLength: number; destroy(): void } } }).ws._socket;
}

describe('WsConnection', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
    conn = undefined;
    server = undefined;
  });

  describe('opening', () => {
    it('fails its one upgrade refused with HTTP 503 as connect_failed with the status: retrying a full server is admission\'s', async () => {
      server = await startWsTestServer(() => 503);
      conn = WsConnection.open(server.url, { session_id: 's1' });
      const ended = streamEnd(conn.events$, BOUND_MS);
      const error = await openError(conn);
      expect(error.reason).toBe('connect_failed');
      expect(error.info).toMatchObject({ status: 503, attempts: 1, session_id: 's1', url: server.url });
      expect(server.upgrades).toBe(1);
      expect((await ended).error).toBe(error);
    });

    it('does not retry an upgrade refused with another status', async () => {
      server = await startWsTestServer(() => 404);
      conn = WsConnection.open(server.url);
      const error = await openError(conn);
      expect(error.reason).toBe('connect_failed');
      expect(error.info.status).toBe(404);
      expect(conn.attempts).toBe(1);
    });

    it('fails as connect_failed with errno ECONNREFUSED when nothing listens', async () => {
      conn = WsConnection.open(await closedPortUrl());
      const ended = streamEnd(conn.events$, BOUND_MS);
      const error = await openError(conn);
      expect(error.reason).toBe('connect_failed');
      expect(error.info.errno).toBe('ECONNREFUSED');
      expect(conn.attempts).toBe(1);
      expect((await ended).error).toBe(error);
    });

    it('fails as connect_timeout when connect_timeout_ms passes before the upgrade is answered', async () => {
      server = await startSilentTcpServer();
      const timers = new ManualTimers();
      conn = WsConnection.open(server.url, { connect_timeout_ms: 200, timers });
      // The bound is armed with the attempt; the silent server never answers, and the bound ends it.
      expect(timers.pending.map((t) => t.delay_ms)).toEqual([200]);
      timers.fire();
      const error = await openError(conn);
      expect(error.reason).toBe('connect_timeout');
      expect(error.message).toMatch(/within 200 ms/);
    });
  });

  describe('a session', () => {
    it('stamps each frame with the injected clock in the message handler', async () => {
      server = await startWsTestServer(() => (ws) => ws.send('{"type":"session.created"}'));
      conn = WsConnection.open(server.url, { clock: { now_s: () => 42.5 } });
      // Subscribe before awaiting `opened`: frames are not replayed to late subscribers.
      const ended = streamEnd(conn.events$, BOUND_MS);
      const first = within(firstValueFrom(conn.events$), BOUND_MS, 'first event');
      await within(conn.opened, BOUND_MS, 'opened');
      expect(await first).toMatchObject({ received_s: 42.5, frame: { type: 'session.created', text: '{"type":"session.created"}' } });
      await conn.close(500);
      const end = await ended;
      expect(end.completed).toBe(true);
      expect(end.values).toHaveLength(1);
    });

    it("writes spliced appends framed in place, and any other frame through ws: a ws server reads every one whole, in order, at each length encoding", async () => {
      const got: string[] = [];
      let all: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (all = resolve));
      server = await startWsTestServer(() => (ws) =>
        ws.on('message', (data: Buffer, isBinary: boolean) => {
          got.push(isBinary ? '(binary)' : data.toString());
          if (got.length === 6) all();
        }),
      );
      conn = WsConnection.open(server.url, {});
      await within(conn.opened, BOUND_MS, 'opened');
      const payload = (n: number) => Buffer.alloc(n, 0x41);
      // 7-bit, 16-bit and 64-bit lengths (RFC 6455 5.2), spliced; a string; an older spliced frame, no longer the last, goes through ws.
      const small = spliceFrame('{"a":"', payload(10), '"}');
      conn.send(small);
      const older = Buffer.from(spliceFrame('{"b":"', payload(200), '"}'));
      conn.send(spliceFrame('{"b":"', payload(200), '"}'));
      conn.send(spliceFrame('{"c":"', payload(70_000), '"}'));
      conn.send('{"d":1}');
      const kept = spliceFrame('{"e":"', payload(3), '"}');
      spliceFrame('{"f":"', payload(1), '"}');
      conn.send(kept);
      conn.send(older);
      await within(done, BOUND_MS, 'six frames');
      expect(got.map((t) => t.slice(0, 6) + t.length)).toEqual(['{"a":"18', '{"b":"208', `{"c":"${70_008}`, '{"d":17', '{"e":"11', '{"b":"208']);
      expect(got[2]).toBe(`{"c":"${'A'.repeat(70_000)}"}`);
    });

    it("takes the socket's bytes from ws's receiver once open (the direct reading is on)", async () => {
      server = await startWsTestServer(() => () => undefined);
      conn = WsConnection.open(server.url, {});
      await within(conn.opened, BOUND_MS, 'opened');
      const socket = (conn as unknown as { ws: { _socket: { listeners(e: string): Array<{ name: string }> } } }).ws._socket;
      expect(socket.listeners('data').map((l) => l.name)).toEqual(['onData']);
    });

    it("reads the server's frames itself, answers its pings, and gives ws a fragmented message and all after it: every frame arrives whole, in order", async () => {
      let ponged: (payload: string) => void = () => undefined;
      const pong = new Promise<string>((resolve) => (ponged = resolve));
      server = await startWsTestServer(() => (ws) => {
        ws.on('pong', (payload: Buffer) => ponged(payload.toString()));
        ws.send('{"type":"one"}');
        ws.ping('hb');
        ws.send('{"type":"two"}');
        // A message in two fragments: the reader hands the connection to ws, which joins them.
        ws.send('{"type":', { fin: false });
        ws.send('"three"}', { fin: true });
        ws.send('{"type":"four"}');
      });
      conn = WsConnection.open(server.url, {});
      const types: string[] = [];
      let four: () => void = () => undefined;
      const all = new Promise<void>((resolve) => (four = resolve));
      conn.events$.subscribe({ next: (e) => (types.push(e.frame.type), types.length === 4 && four()), error: () => undefined });
      await within(conn.opened, BOUND_MS, 'opened');
      await within(all, BOUND_MS, 'four frames');
      expect(types).toEqual(['one', 'two', 'three', 'four']);
      expect(await within(pong, BOUND_MS, 'pong')).toBe('hb');
    });

    it('pauses a socket whose read ended past the reads\' bound, until the next timers phase: its frames come then, whole and in order', async () => {
      server = await startWsTestServer(() => (ws) => {
        ws.send('{"type":"one"}');
        ws.once('message', () => ['two', 'three', 'four'].forEach((t) => ws.send(`{"type":"${t}"}`)));
      });
      // A bound below zero and no least size: every read is past it.
      const timers = new ManualTimers();
      const reads = new ReadBurst(timers, -1, 0);
      conn = WsConnection.open(server.url, { reads, socket: streamSocket });
      const types: string[] = [];
      conn.events$.subscribe({ next: (e) => types.push(e.frame.type), error: () => undefined });
      await within(conn.opened, BOUND_MS, 'opened');
      await until(() => types.length === 1, 'the first frame');
      expect(reads.paused).toBe(1);
      // The server's next frames reach the paused socket and wait in its stream.
      conn.send('{"type":"more"}');
      const socket = socketOf(conn);
      await until(() => socket.readableLength > 0, 'bytes held by the paused socket');
      expect(types).toEqual(['one']);
      // Each timers phase resumes it; each read pauses it again, until every frame is in.
      await until(() => (firePending(timers), types.length === 4), 'every frame');
      expect(types).toEqual(['one', 'two', 'three', 'four']);
    });

    it('pauses a socket that reads into its own buffer by stopping its reads: the frames wait in the kernel, and come whole and in order once resumed', async () => {
      let written!: () => void;
      const allWritten = new Promise<void>((r) => (written = r));
      server = await startWsTestServer(() => (ws) => {
        ws.send('{"type":"one"}');
        ws.once('message', () => {
          let left = 3;
          for (const t of ['two', 'three', 'four']) ws.send(`{"type":"${t}"}`, () => --left === 0 && written());
        });
      });
      const timers = new ManualTimers();
      const reads = new ReadBurst(timers, -1, 0);
      conn = WsConnection.open(server.url, { reads });
      const types: string[] = [];
      conn.events$.subscribe({ next: (e) => types.push(e.frame.type), error: () => undefined });
      await within(conn.opened, BOUND_MS, 'opened');
      await until(() => types.length === 1, 'the first frame');
      expect(reads.paused).toBe(1);
      conn.send('{"type":"more"}');
      // Written to the client's socket; a turn of the loop later the client has polled it, and read nothing.
      await within(allWritten, BOUND_MS, 'the server wrote its frames');
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(types).toEqual(['one']);
      expect(socketOf(conn).readableLength).toBe(0);
      await until(() => (firePending(timers), types.length === 4), 'every frame');
      expect(types).toEqual(['one', 'two', 'three', 'four']);
    });

    it("hands the bytes a paused socket holds when it closes to its own reader, which holds the frame's start, not to ws", async () => {
      // Frames written as raw bytes, split mid-frame: the first read holds frame one and part of frame two.
      const frame = (text: string) => Buffer.concat([Buffer.from([0x81, text.length]), Buffer.from(text)]);
      const two = frame('{"type":"two"}');
      server = await startWsTestServer(() => (ws) => {
        const raw = (ws as unknown as { _socket: { write(b: Buffer): void } })._socket;
        raw.write(Buffer.concat([frame('{"type":"one"}'), two.subarray(0, 5)]));
        ws.once('message', () => raw.write(Buffer.concat([two.subarray(5), frame('{"type":"three"}')])));
      });
      const reads = new ReadBurst(new ManualTimers(), -1, 0);
      conn = WsConnection.open(server.url, { reads, socket: streamSocket });
      const ended = streamEnd(conn.events$, BOUND_MS);
      await within(conn.opened, BOUND_MS, 'opened');
      const socket = socketOf(conn);
      await until(() => reads.paused === 1, 'the first read, paused');
      conn.send('{"type":"more"}');
      await until(() => socket.readableLength > 0, 'bytes held by the paused socket');
      // The socket dropped while paused (a reset, or a close bound that terminates it).
      socket.destroy();
      const end = await ended;
      expect(end.values.map((e) => e.frame.type)).toEqual(['one', 'two', 'three']);
      expect(end.error).toMatchObject({ reason: 'server_closed', info: { close_code: 1006 } });
    });

    it('errors events$ with server_closed, code and reason, when the server closes mid-session', async () => {
      server = await startWsTestServer(() => (ws) => {
        ws.send('{"type":"session.created"}');
        ws.once('message', () => ws.close(1011, 'model crashed'));
      });
      conn = WsConnection.open(server.url);
      const ended = streamEnd(conn.events$, BOUND_MS);
      await within(conn.opened, BOUND_MS, 'opened');
      conn.send('{"type":"session.update"}');
      const end = await ended;
      expect(end.values.map((e) => e.frame.type)).toEqual(['session.created']);
      expect(end.error).toBeInstanceOf(TransportError);
      expect(end.error).toMatchObject({ reason: 'server_closed', info: { close_code: 1011, close_reason: 'model crashed' } });
      expect(conn.isOpen).toBe(false);
    });

    it('errors events$ with server_closed when the server drops the TCP connection', async () => {
      server = await startWsTestServer(() => (ws) => ws.terminate());
      conn = WsConnection.open(server.url);
      const end = await streamEnd(conn.events$, BOUND_MS);
      expect(end.error).toMatchObject({ reason: 'server_closed', info: { close_code: 1006 } });
    });

    it('errors events$ with MALFORMED_FRAME when the server sends a text frame that is not JSON', async () => {
      server = await startWsTestServer(() => (ws) => {
        ws.send('{"type":"session.created"}');
        ws.send('{"type":"response.output_audio.delta","delta":');
        ws.send('{"type":"never.seen"}');
      });
      conn = WsConnection.open(server.url);
      const end = await streamEnd(conn.events$, BOUND_MS);
      expect(end.values.map((e) => e.frame.type)).toEqual(['session.created']);
      expect(end.error).toBeInstanceOf(ProtocolError);
      expect(end.error).toMatchObject({ code: 'MALFORMED_FRAME' });
      expect(conn.isOpen).toBe(false);
    });

    it('errors events$ with MALFORMED_FRAME on a binary frame', async () => {
      server = await startWsTestServer(() => (ws) => ws.send(Buffer.from([1, 2, 3])));
      conn = WsConnection.open(server.url);
      const end = await streamEnd(conn.events$, BOUND_MS);
      expect(end.error).toBeInstanceOf(ProtocolError);
      expect(end.error).toMatchObject({ code: 'MALFORMED_FRAME' });
    });

    it('reports a send on a socket that is not open through events$, never by throwing', async () => {
      server = await startWsTestServer(() => () => undefined);
      conn = WsConnection.open(server.url);
      await within(conn.opened, BOUND_MS, 'opened');
      const ended = streamEnd(conn.events$, BOUND_MS);
      await conn.close(500);
      expect(() => conn?.send('{"type":"late"}')).not.toThrow();
      // The stream completed on close; the failed send does not reopen or error it.
      expect((await ended).completed).toBe(true);
    });

    it('fails the session as send_failed when sending before the socket is open', async () => {
      server = await startSilentTcpServer();
      conn = WsConnection.open(server.url, { connect_timeout_ms: 2000 });
      const ended = streamEnd(conn.events$, BOUND_MS);
      conn.send('{"type":"too.early"}');
      expect((await ended).error).toMatchObject({ reason: 'send_failed' });
      // Sending before open is a misuse; the attempt still ends with a typed error, not a hang.
      await expect(within(conn.opened, BOUND_MS, 'opened')).rejects.toBeInstanceOf(TransportError);
    });

    it('completes events$ when the client closes', async () => {
      server = await startWsTestServer(() => () => undefined);
      conn = WsConnection.open(server.url);
      const ended = streamEnd(conn.events$, BOUND_MS);
      await within(conn.opened, BOUND_MS, 'opened');
      await conn.close(500);
      expect(await ended).toEqual({ values: [], completed: true });
      expect(conn.isOpen).toBe(false);
    });
  });
});
