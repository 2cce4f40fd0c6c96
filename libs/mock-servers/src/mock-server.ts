import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { nodeTimerHost } from '@duplex-bench/pacer';
import { TIME_PATH, monotonicMs, stampSent } from '@duplex-bench/protocol';
import type { MockDialect } from './mock-dialect';
import type { MockFault } from './mock-fault';
import { behaviourReportSettings, resolveBehaviour } from './behaviour-settings';
import { isLegacyProfile, mockSettings, type MockServerOptions } from './mock-options';
import { legacyDialect } from './legacy-dialect';
import { MockStatsRecorder, type MockCounts, type MockStats } from './mock-stats';
import { NATIVE_ARRIVAL_ORIGIN, nativeDialect } from './native-dialect';
import { OPENAI_ARRIVAL_ORIGIN, openaiDialect } from './openai-dialect';
import type { MockHost } from './openai-mock-session';
import { wallClockMs } from './time-server';
import { vllmDialect } from './vllm-dialect';

export type { MockServerOptions } from './mock-options';

export interface MockServer {
  readonly url: string;
  readonly port: number;
  stats(): MockStats;
  /** The running counts (live telemetry reads them at each scrape). */
  counts(): MockCounts;
  close(): Promise<void>;
}

const PATH = '/v1/realtime';

/**
 * The mock server: the native dialect (sglang-omni duplex) or the openai one, answering at once
 * (append-echo) or like a duplex speech model. This is the host: the HTTP(S) and WebSocket server,
 * the upgrade and its refusals, the frames out, the stats and the shutdown; each dialect
 * (native-dialect.ts, openai-dialect.ts, vllm-dialect.ts) takes the sessions. Reply frames come
 * from templates built once, and input audio is measured by its base64 length, never decoded —
 * except in behaviour mode (`options.behaviour`), where the model mocks hear the user by energy.
 */
export async function startMockServer(options: MockServerOptions = {}, fault?: MockFault): Promise<MockServer> {
  const clock = options.clock ?? nodeTimerHost;
  const settings = mockSettings(options);
  const protocol = options.protocol ?? 'native';
  const vllmFlavor = protocol === 'openai' && options.openai?.flavor === 'vllm-omni';
  const capacity = options.capacity_sessions;
  // The stats are made below; the load reads them when a session asks.
  let active = () => 0;
  if (options.behaviour) settings.behaviour = await resolveBehaviour(options.behaviour, settings.output_sample_rate, capacity === undefined ? () => 1 : () => active() / capacity);
  const stats = new MockStatsRecorder({
    clock,
    unit_ms: settings.unit_ms,
    arrival_origin: protocol === 'openai' || isLegacyProfile(options.profile) ? OPENAI_ARRIVAL_ORIGIN : NATIVE_ARRIVAL_ORIGIN,
    vllm: vllmFlavor,
    ...(settings.behaviour ? { behaviour: behaviourReportSettings(settings.behaviour, capacity) } : {}),
  });
  active = () => stats.active;
  if (settings.model && capacity !== undefined) settings.model.load = () => stats.active / capacity;

  /**
   * A frame to a session. What one message calls for (an ack, audio, text and a unit done per
   * append) leaves in one socket write: the socket is corked on the first frame and uncorked once
   * the handler is done. Four writes per append were 42% of the mock's CPU at 512 sessions
   * (docs/performance.md), and each woke the client once more.
   */
  const stamp = options.stamp_sends === true;
  function send(ws: WebSocket, frame: string): void {
    stats.frameSent();
    if (stamp) frame = stampSent(frame, monotonicMs());
    const socket = (ws as unknown as { _socket?: Socket })._socket;
    if (socket && !corked.has(socket)) {
      corked.add(socket);
      socket.cork();
      process.nextTick(uncork, socket);
    }
    ws.send(frame);
  }
  const corked = new Set<Socket>();
  function uncork(socket: Socket): void {
    corked.delete(socket);
    socket.uncork();
  }

  const host: MockHost = {
    clock,
    send,
    arrivals: () => stats.arrivals(),
    arrivalsDone: (a) => stats.arrivalsDone(a),
    completed: () => stats.sessionCompleted(),
    behaviourLog: (id) => stats.behaviourLog(id),
  };
  const dialect: MockDialect = isLegacyProfile(options.profile) ? legacyDialect(settings, host) : vllmFlavor ? vllmDialect(settings, options, host, stats) : protocol === 'openai' ? openaiDialect(settings, options, host) : nativeDialect(settings, host, stats, options.images);

  let nextId = 0;
  let upgrades = 0;
  function onSession(ws: WebSocket): void {
    stats.sessionOpened();
    const index = nextId++;
    const faulty = fault !== undefined && index % (fault.every_nth_session ?? 1) === 0;
    const connection = dialect.open(ws, `mock_${index}`, faulty && fault ? fault : null);
    const session = connection.session;
    ws.on('error', () => stats.socketError());
    ws.on('close', (code: number) => {
      stats.sessionClosed();
      connection.closed(code);
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => session.onMessage(data, isBinary, clock.now_s()));
    connection.start();
  }

  // A client frame past 8 MiB is refused as it arrives (ws closes with 1009), as the probe bounds the server's.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: true, maxPayload: 8 * 2 ** 20 });
  const notFound = (req: IncomingMessage, res: ServerResponse) => {
    // The reference clock shards estimate their offset against (see the shards' --time-url).
    if (req.method === 'GET' && req.url === TIME_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"epoch_ms":${wallClockMs()}}`);
      return;
    }
    res.writeHead(404).end();
  };
  const http: Server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, notFound) : createServer(notFound);
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    if (options.max_sessions !== undefined && dialect.refuses_upgrade_when_full && stats.active >= options.max_sessions) {
      stats.admission('refused', stats.active);
      stats.refused503();
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    // `refuse_admission`: the sessions the fault picks are refused as a full server refuses them.
    if (fault?.action === 'refuse_admission' && upgrades++ % (fault.every_nth_session ?? 1) === 0) {
      stats.admission('refused', stats.active);
      stats.refused503();
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    // The vllm-omni flavour admits at the opening session.update (its dialect logs it).
    if (dialect.refuses_upgrade_when_full) stats.admission('accepted', stats.active);
    if (/^Bearer \S/.test(req.headers.authorization ?? '')) stats.withBearer();
    wss.handleUpgrade(req, socket, head, (ws) => onSession(ws));
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const listenHost = options.host ?? '127.0.0.1';

  return {
    url: `${options.tls ? 'wss' : 'ws'}://${listenHost}:${port}${PATH}`,
    port,
    stats: () => stats.stats(),
    counts: () => stats.counts(),
    close: () =>
      new Promise<void>((resolve) => {
        stats.stop();
        dialect.close();
        for (const client of wss.clients) client.terminate();
        wss.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
