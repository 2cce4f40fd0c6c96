import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { DialectOptions } from './dialect-options';
import { packetSizeOr, resolvePacketSize } from './packet-size';

const options = (over: Partial<DialectOptions> = {}): DialectOptions => ({
  protocol: 'openai',
  commit_given: false,
  no_playback_ack: false,
  turn_detection: 'none',
  commit_every_s: 1,
  sample_rate: 16000,
  packet_ms: 80,
  packet_ms_given: false,
  admission: { retries: 0, backoff_ms: 0, max_backoff_ms: 0 },
  close_timeout_ms: 1000,
  ...over,
});

/** A realtime server on 127.0.0.1 that greets every connection with `created`, and records each upgrade's headers. */
class Greeter {
  readonly upgrades: IncomingMessage['headers'][] = [];
  private readonly http: Server;
  private readonly sockets = new Set<Socket>();
  private readonly wss = new WebSocketServer({ noServer: true });

  constructor(created: Record<string, unknown>) {
    this.http = createServer((_req, res) => res.writeHead(404).end());
    this.http.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.http.on('upgrade', (req, socket, head) => {
      this.upgrades.push(req.headers);
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', () => undefined);
        ws.send(JSON.stringify(created));
      });
    });
  }

  async url(): Promise<string> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    return `ws://127.0.0.1:${(this.http.address() as AddressInfo).port}/v1/realtime`;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.wss.close();
    return new Promise((resolve) => this.http.close(() => resolve()));
  }
}

const created = (chunk_period_ms?: number) => ({ type: 'session.created', session: { id: 's', ...(chunk_period_ms !== undefined ? { capabilities: { chunk_period_ms } } : {}) } });

describe('resolvePacketSize', () => {
  let server: Greeter | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('takes --packet-ms as given, and asks no server', async () => {
    server = new Greeter(created(160));
    expect(await resolvePacketSize(await server.url(), options({ packet_ms: 40, packet_ms_given: true }), 2000)).toEqual({ packet_ms: 40, source: '--packet-ms' });
    expect(server.upgrades).toHaveLength(0);
  });

  it('gives a native or vllm-omni run the default, asking no server', async () => {
    server = new Greeter(created(160));
    const url = await server.url();
    expect(await resolvePacketSize(url, options({ protocol: 'native' }), 2000)).toEqual({ packet_ms: 80, source: 'default' });
    expect(await resolvePacketSize(url, options({ protocol: 'vllm-omni' }), 2000)).toEqual({ packet_ms: 80, source: 'default' });
    expect(server.upgrades).toHaveLength(0);
  });

  it("openai without --packet-ms: packets of the server's announced chunk_period_ms, read with the key", async () => {
    server = new Greeter(created(160));
    const url = await server.url();
    expect(await resolvePacketSize(url, options({ api_key: 'sk-1' }), 2000)).toEqual({ packet_ms: 160, source: 'session.created.capabilities.chunk_period_ms' });
    expect(server.upgrades).toHaveLength(1);
    expect(server.upgrades[0].authorization).toBe('Bearer sk-1');
  });

  it('keeps the default when the server announces no unit', async () => {
    server = new Greeter(created());
    expect(await resolvePacketSize(await server.url(), options({ packet_ms: 100 }), 2000)).toEqual({ packet_ms: 100, source: 'default' });
  });

  it('refuses an announced unit that splits a sample at the input rate, with a coded error that asks for --packet-ms', async () => {
    server = new Greeter(created(10));
    await expect(resolvePacketSize(await server.url(), options({ sample_rate: 22050 }), 2000)).rejects.toMatchObject({
      name: 'RunInputError',
      code: 'BAD_CHUNK_PERIOD',
      message: "the server's chunk_period_ms 10 is not a whole number of samples at 22050 Hz; give --packet-ms",
    });
  });
});

describe('packetSizeOr', () => {
  let server: Greeter | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('hands a server it cannot reach to `unreachable` as one message, and gives null', async () => {
    // A port that was free a moment ago: nothing listens there.
    const closed = new Greeter(created(160));
    const url = await closed.url();
    await closed.close();
    const said: string[] = [];
    expect(await packetSizeOr(url, options(), 2000, (m) => said.push(m))).toBeNull();
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/refused/i);
  });

  it('goes on with the default packet when the server refuses the look at admission (full: HTTP 503), and says so', async () => {
    const full = createServer((_req, res) => res.writeHead(404).end());
    full.on('upgrade', (_req, socket: Socket) => socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n'));
    await new Promise<void>((resolve) => full.listen(0, '127.0.0.1', resolve));
    try {
      const url = `ws://127.0.0.1:${(full.address() as AddressInfo).port}/v1/realtime`;
      const errors: string[] = [];
      const lines: string[] = [];
      expect(await packetSizeOr(url, options(), 2000, (m) => errors.push(m), (l) => lines.push(l))).toEqual({ packet_ms: options().packet_ms, source: 'default' });
      expect(errors).toEqual([]);
      expect(lines).toEqual([expect.stringMatching(/^packets: \d+ ms \(the default\): the server refused the look at its session\.created \(server refused the session with HTTP 503/)]);
    } finally {
      await new Promise((resolve) => full.close(resolve));
    }
  });

  it('gives the size when the server answers, and says nothing', async () => {
    server = new Greeter(created(40));
    const said: string[] = [];
    expect(await packetSizeOr(await server.url(), options(), 2000, (m) => said.push(m))).toEqual({ packet_ms: 40, source: 'session.created.capabilities.chunk_period_ms' });
    expect(said).toEqual([]);
  });

  it('still throws bad input as its RunInputError', async () => {
    server = new Greeter(created(10));
    const said: string[] = [];
    await expect(packetSizeOr(await server.url(), options({ sample_rate: 22050 }), 2000, (m) => said.push(m))).rejects.toMatchObject({ code: 'BAD_CHUNK_PERIOD' });
    expect(said).toEqual([]);
  });
});
