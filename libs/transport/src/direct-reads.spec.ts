import { createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { CHECK_READS_ENV, connectDirect, directReadsOf } from './direct-reads';
import { FULL_READ_BYTES } from './read-burst';

/** A local TCP server whose one accepted socket the test writes to. */
async function peer(): Promise<{ server: Server; port: number; accepted: Promise<Socket> }> {
  const server = createServer();
  const accepted = once(server, 'connection').then(([s]) => s as Socket);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, accepted };
}

/** Resolves with the next `n` calls' first arguments. */
function collect<T>(n: number): { take: (x: T) => void; got: Promise<T[]> } {
  const seen: T[] = [];
  let done!: (v: T[]) => void;
  const got = new Promise<T[]>((r) => (done = r));
  return {
    take: (x) => {
      seen.push(x);
      if (seen.length === n) done(seen);
    },
    got,
  };
}

describe('connectDirect: a socket that reads into a buffer of its own', () => {
  let p: Awaited<ReturnType<typeof peer>>;
  let client: Socket;
  let server: Socket;
  beforeEach(async () => {
    p = await peer();
    client = connectDirect({ host: '127.0.0.1', port: p.port, path: '/v1/realtime' } as never);
    server = await p.accepted;
  });
  afterEach(async () => {
    client.destroy();
    server.destroy();
    p.server.close();
    await once(p.server, 'close');
  });

  it("connects by host and port whatever ws's `path` (the URL's), and reads into one buffer as large as Node's own", () => {
    const reads = directReadsOf(client);
    expect(reads).not.toBeNull();
    expect(reads?.buffer.length).toBe(FULL_READ_BYTES);
    expect(directReadsOf({})).toBeNull();
  });

  it('pushes a copy of each read into the stream until taken, then hands each read over as a view of that buffer', async () => {
    const reads = directReadsOf(client);
    const before = collect<Buffer>(1);
    client.on('data', before.take);
    server.write('first');
    const [streamed] = await before.got;
    client.removeAllListeners('data');
    const views: Buffer[] = [];
    const copies: string[] = [];
    let next!: () => void;
    reads?.take((bytes) => {
      views.push(bytes);
      copies.push(String(bytes));
      next();
    });
    await new Promise<void>((r) => ((next = r), server.write('second')));
    await new Promise<void>((r) => ((next = r), server.write('third!')));
    expect(copies).toEqual(['second', 'third!']);
    // The stream's copy stays; the taker's views are the socket's buffer, written over by the next read.
    expect(String(streamed)).toBe('first');
    expect(views[0].buffer).toBe(reads?.buffer.buffer);
    expect(String(views[0])).toBe('third!');
  });

  it('stops reading on pause, the bytes waiting in the kernel, and reads them on resume; gives reads back to the stream', async () => {
    const reads = directReadsOf(client);
    const got: Array<{ bytes: string; resumed: boolean }> = [];
    let resumed = false;
    let arrived!: () => void;
    reads?.take((bytes) => {
      got.push({ bytes: String(bytes), resumed });
      arrived();
    });
    // Paused as the connection pauses it (Node's own pause, which stops the handle of an onread socket): from a read.
    await new Promise<void>((r) => ((arrived = r), server.write('read')));
    got.length = 0;
    client.pause();
    server.write('held');
    // A round trip the other way: by the time the server reads it, the loop has polled the client's socket.
    client.write('x');
    await once(server, 'data');
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([]);
    resumed = true;
    await new Promise<void>((r) => ((arrived = r), client.resume()));
    expect(got).toEqual([{ bytes: 'held', resumed: true }]);
    reads?.giveBack();
    const back = collect<Buffer>(1);
    client.on('data', back.take);
    server.write('ws again');
    expect(String((await back.got)[0])).toBe('ws again');
  });

  it(`under ${CHECK_READS_ENV}, lands each read in a new buffer and overwrites the read before with ~ when the next lands`, async () => {
    process.env[CHECK_READS_ENV] = '1';
    const checked = connectDirect({ host: '127.0.0.1', port: p.port } as never);
    delete process.env[CHECK_READS_ENV];
    const other = await once(p.server, 'connection').then(([s]) => s as Socket);
    try {
      const views: Buffer[] = [];
      const copies: string[] = [];
      let next!: () => void;
      directReadsOf(checked)?.take((bytes) => {
        views.push(bytes);
        copies.push(String(bytes));
        next();
      });
      await once(checked, 'connect');
      await new Promise<void>((r) => ((next = r), other.write('second')));
      expect(String(views[0])).toBe('second');
      await new Promise<void>((r) => ((next = r), other.write('third!')));
      expect(copies).toEqual(['second', 'third!']);
      // A view kept past the next read reads as ~, whatever the next read held.
      expect(String(views[0])).toBe('~~~~~~');
      expect(views[1].buffer).not.toBe(views[0].buffer);
    } finally {
      checked.destroy();
      other.destroy();
    }
  });
});
