import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TIME_PATH } from '@duplex-bench/protocol';
import { estimateClockOffset, timeUrlOf } from './clock-offset';

describe('timeUrlOf', () => {
  it("is the reference clock's path on the realtime server's host and port, over http for ws and https for wss", () => {
    expect(timeUrlOf('ws://10.0.0.2:8000/v1/realtime?model=m')).toBe(`http://10.0.0.2:8000${TIME_PATH}`);
    expect(timeUrlOf('wss://srv.example/ws')).toBe(`https://srv.example${TIME_PATH}`);
    expect(timeUrlOf('ws://[::1]:9/')).toBe(`http://[::1]:9${TIME_PATH}`);
  });
});

describe('estimateClockOffset', () => {
  let server: Server | undefined;
  let connections = 0;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A reference on 127.0.0.1 whose n-th answer (from 0, the connection's opening one first) is `answer(n)`. */
  async function reference(answer: (n: number, res: ServerResponse) => void): Promise<string> {
    let n = 0;
    connections = 0;
    server = createServer((_req, res) => answer(n++, res));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}${TIME_PATH}`;
  }

  it('keeps the exchange with the smallest round trip: offset = r − (t0 + t3) / 2, uncertainty half that trip', async () => {
    // The reference's readings after the opening exchange, and this host's before and after each.
    const readings = [0, 505, 602.5, 1000];
    const wall = [0, 10, 100, 104, 200, 220];
    const url = await reference((n, res) => res.end(JSON.stringify({ epoch_ms: readings[n] })));
    let at = 0;
    const o = await estimateClockOffset(url, () => wall[at++], 3);
    // Trips of 10, 4 and 20 ms: the second one's offset, 602.5 − 102.
    expect(o).toEqual({ reference: url, offset_ms: 500.5, uncertainty_ms: 2.001, rtt_ms: 4, samples: 3 });
    expect(at).toBe(6);
  });

  it('asks over one kept-alive connection, opened by an exchange that is no sample', async () => {
    let asked = 0;
    const url = await reference((_n, res) => {
      asked++;
      res.end(JSON.stringify({ epoch_ms: 1 }));
    });
    await estimateClockOffset(url, () => 0, 5);
    expect(asked).toBe(6);
    expect(connections).toBe(1);
  });

  it('rounds to the microsecond', async () => {
    const url = await reference((_n, res) => res.end(JSON.stringify({ epoch_ms: 1000.12345678 })));
    const wall = [0, 0.3333333];
    let at = 0;
    const o = await estimateClockOffset(url, () => wall[at++ % 2], 1);
    expect(o).toMatchObject({ offset_ms: 999.957, rtt_ms: 0.333, uncertainty_ms: 0.168 });
  });

  it('fails, naming the reference, when it answers without a time', async () => {
    const url = await reference((_n, res) => res.end(JSON.stringify({ epoch_ms: 'soon' })));
    await expect(estimateClockOffset(url, () => 0, 2)).rejects.toThrow(`${url} answered 200 without epoch_ms`);
  });

  it('takes no time from an answer other than 200', async () => {
    const url = await reference((_n, res) => res.writeHead(503).end(JSON.stringify({ epoch_ms: 5 })));
    await expect(estimateClockOffset(url, () => 0, 2)).rejects.toThrow(`${url} answered 503 without epoch_ms`);
  });

  it('fails within its bound when the reference never answers', async () => {
    const url = await reference(() => undefined);
    await expect(estimateClockOffset(url, () => 0, 2, 50)).rejects.toThrow(`${url}: no answer within 50 ms`);
  });

  it('fails when nothing listens', async () => {
    const url = await reference(() => undefined);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    await expect(estimateClockOffset(url, () => 0, 1)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
