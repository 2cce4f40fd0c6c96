// Small real servers for transport tests: every one binds 127.0.0.1 on port 0, and `close()` drops
// every socket it accepted, so jest exits with no open handle.
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Observable } from 'rxjs';
import WebSocket, { WebSocketServer } from 'ws';

const HOST = '127.0.0.1';

export interface TestServer {
  readonly url: string;
  readonly port: number;
  /** Upgrade requests seen so far. */
  readonly upgrades: number;
  close(): Promise<void>;
}

/** An HTTP status to refuse the upgrade with, or the handler of an accepted WebSocket. */
export type UpgradeAnswer = number | ((ws: WebSocket) => void);

function listen(server: TcpServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

function trackSockets(server: TcpServer): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

function closeAll(server: TcpServer, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A WebSocket server on `/v1/realtime` whose answer to upgrade N (from 1) is `answer(N)`. */
export async function startWsTestServer(answer: (upgrade: number) => UpgradeAnswer): Promise<TestServer> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const http = createHttpServer((_req, res) => res.writeHead(404).end());
  const sockets = trackSockets(http);
  let upgrades = 0;
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const decision = answer(++upgrades);
    if (typeof decision === 'number') {
      socket.end(`HTTP/1.1 ${decision} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => undefined);
      decision(ws);
    });
  });
  const port = await listen(http);
  return {
    url: `ws://${HOST}:${port}/v1/realtime`,
    port,
    get upgrades() {
      return upgrades;
    },
    close: () => {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      return closeAll(http, sockets);
    },
  };
}

/** A TCP server that accepts connections and never says a word. */
export async function startSilentTcpServer(): Promise<TestServer> {
  const tcp = createTcpServer();
  const sockets = trackSockets(tcp);
  let upgrades = 0;
  tcp.on('connection', () => upgrades++);
  const port = await listen(tcp);
  return {
    url: `ws://${HOST}:${port}/v1/realtime`,
    port,
    get upgrades() {
      return upgrades;
    },
    close: () => closeAll(tcp, sockets),
  };
}

/** A URL on a port that was just opened and closed again, so nothing listens there. */
export async function closedPortUrl(): Promise<string> {
  const tcp = createTcpServer();
  const port = await listen(tcp);
  await new Promise<void>((resolve) => tcp.close(() => resolve()));
  return `ws://${HOST}:${port}/v1/realtime`;
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

export interface StreamEnd<T> {
  values: T[];
  /** Set when the stream errored. */
  error?: unknown;
  completed: boolean;
}

/** Everything `source` emits until it errors or completes; rejects if it does neither within `ms`. */
export function streamEnd<T>(source: Observable<T>, ms: number): Promise<StreamEnd<T>> {
  const values: T[] = [];
  let unsubscribe = (): void => undefined;
  const ended = new Promise<StreamEnd<T>>((resolve) => {
    const subscription = source.subscribe({
      next: (v) => values.push(v),
      error: (error: unknown) => resolve({ values, error, completed: false }),
      complete: () => resolve({ values, completed: true }),
    });
    unsubscribe = () => subscription.unsubscribe();
  });
  return within(ended, ms, 'stream end').finally(() => unsubscribe());
}
