import { VirtualTime } from '@duplex-bench/pacer/testing';
import { WsConnection } from './connection';
import type { TransportError } from './errors';
import { FakeServer } from './fake-server';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';

const BOUND_MS = 3000;

describe('what a server can send or refuse to read is bounded', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;
  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
  });

  it('a frame over --max-frame-bytes ends the session as frame_too_large, naming the bound, and none of it reaches the session', async () => {
    let sent: (() => void) | undefined;
    server = await startWsTestServer(() => (ws) => (sent = () => ws.send(JSON.stringify({ type: 'big', pad: 'x'.repeat(64 * 1024) }))));
    const c = WsConnection.open(server.url, { max_frame_bytes: 16 * 1024 });
    conn = c;
    const seen: string[] = [];
    const failed = new Promise<unknown>((resolve) => c.events$.subscribe({ next: (e) => seen.push(String(e.frame.type)), error: resolve }));
    await within(c.opened, BOUND_MS, 'open');
    sent?.();
    const err = (await within(failed, BOUND_MS, 'the failure')) as TransportError;
    expect(err).toMatchObject({ reason: 'frame_too_large' });
    expect(err.message).toMatch(/over --max-frame-bytes 16384/);
    expect(seen).toEqual([]);
  });

  it('a frame within the bound is taken whole', async () => {
    let sent: (() => void) | undefined;
    server = await startWsTestServer(() => (ws) => (sent = () => ws.send(JSON.stringify({ type: 'fits', pad: 'x'.repeat(8 * 1024) }))));
    const c = WsConnection.open(server.url, { max_frame_bytes: 16 * 1024 });
    conn = c;
    const got = new Promise<string>((resolve) => c.events$.subscribe((e) => resolve(String(e.frame.type))));
    await within(c.opened, BOUND_MS, 'open');
    sent?.();
    expect(await within(got, BOUND_MS, 'the frame')).toBe('fits');
  });

  it('a server that stops reading ends the session as send_backpressure at the send that passes --max-send-buffer-bytes', async () => {
    const time = new VirtualTime();
    const fake = new FakeServer(time, () => ({ accept: () => undefined }));
    const c = fake.connect('ws://fake/x', { max_send_buffer_bytes: 4096 });
    let failure: TransportError | null = null;
    c.events$.subscribe({ error: (e: TransportError) => (failure = e) });
    await time.run(c.opened);
    fake.sessions[0].buffered = 4096;
    c.send('{"type":"a"}');
    expect(failure).toBeNull();
    fake.sessions[0].buffered = 4097;
    c.send('{"type":"b"}');
    expect(failure).toMatchObject({ reason: 'send_backpressure' });
    expect(String((failure as unknown as Error).message)).toMatch(/4097 bytes queued unsent, past --max-send-buffer-bytes 4096/);
  });
});
