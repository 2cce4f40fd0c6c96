import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';
import { NATIVE_PROFILES, nativeGrant, TIME_PATH, type NativeLimits } from '@duplex-bench/protocol';
import type { ModelOptions } from './model-session';
import type { MockFault } from './mock-fault';
import { NativeMockSession, type NativeMockOptions } from './native-mock-session';
import { wallClockMs } from './time-server';
import { OpenAIMockSession, type MockHost, type OpenAIMockOptions } from './openai-mock-session';
import { VllmMockSession, type VllmMockOptions } from './vllm-mock-session';
import { ArrivalOffsets } from './arrival-offsets';
import { CpuMeter, createUsHistogram, LoopLagMonitor, percentilesMs, recordMs, type PercentilesMs, type LoopLagFigures, type CpuFigures } from '@duplex-bench/metrics';

export interface MockServerOptions {
  /** Wire dialect: sglang-omni `native` (default) or OpenAI Realtime `openai`. */
  protocol?: 'native' | 'openai';
  /** The openai dialect's settings: event names, vLLM-Omni extensions, VAD silence. */
  openai?: Partial<Pick<OpenAIMockOptions, 'names' | 'vllm' | 'silence_ms'>> & {
    /** `vllm-omni`: vLLM-Omni's own duplex flow (client speaks first, ack-only playback, event journal, slots held after a disconnect). */
    flavor?: 'openai' | 'vllm-omni';
    /** vllm-omni: every Kth turn the model keeps listening (0 never). */
    listen_every?: number;
    /** vllm-omni: how long a session ended without `session.close` holds its slot (default 30 s). */
    disconnect_grace_ms?: number;
    /** vllm-omni: the wait for the client's first message (default 10 s). */
    config_timeout_ms?: number;
    /** vllm-omni: unacknowledged journal bytes that ask for a resync (default 8 MiB). */
    journal_max_bytes?: number;
    /** vllm-omni: refuse an audio session without a reference voice (`ref_audio_required`), as MiniCPM-o 4.5 does. */
    require_ref_audio?: boolean;
  };
  /** Serve `wss://` with this key and certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** append-echo: events sent back per input unit: an audio delta, transcript deltas, then `sglang.unit.done` (native; at least 2). */
  replies_per_append?: number;
  /** Output rate; native: the profile's unless given. */
  output_sample_rate?: number;
  /** openai only: the native dialect's input is 16 kHz. */
  input_sample_rate?: number;
  /** Input unit; native: the profile's `native_unit_ms` unless given. */
  unit_ms?: number;
  /** Sessions held at once; further upgrades get HTTP 503. */
  max_sessions?: number;
  /** Model profiles: past this many active sessions the model cannot keep up (see ModelOptions.load). */
  capacity_sessions?: number;
  /**
   * How the server answers. `append-echo`: at once, no model. Native: `nemotron` (80 ms units,
   * 22,050 Hz, one response per session) or `minicpmo` (1 s units, 24,000 Hz, turns). openai:
   * `model` (turns, first-packet latency, real-time factor, bursts).
   */
  profile?: MockProfile;
  model?: Partial<ModelOptions>;
  /** The clock and timers of every wait: model turns and bursts, server VAD, the close and disconnect graces (default: real ones); tests pass virtual time. */
  clock?: TimerHost;
}


export type MockProfile = 'append-echo' | 'nemotron' | 'minicpmo' | 'model';

/** Model timings of each profile; a caller's `model` options override them. */
const MODEL_DEFAULTS: Record<Exclude<MockProfile, 'append-echo'>, ModelOptions> = {
  // One response for the whole session: no turn ever starts after the first.
  nemotron: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity },
  minicpmo: { ttfp_ms: 300, rtf: 0.5, burst_units: 1, turn_every_s: 5 },
  model: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: 5 },
};

/** What the native mock states it enforces: nothing a benchmark reaches (an hour of input per session). */
const MOCK_LIMITS: NativeLimits = {
  max_input_bytes: 3600 * 32_000,
  max_input_chunks: 3600 * 1000,
  max_output_bytes: 3600 * 48_000,
  max_output_events: 3600 * 1000,
  max_responses: 3600,
  max_segments: 3600 * 1000,
  max_history_chars: 65536,
  session_timeout_s: 3600,
  cleanup_timeout_s: 30,
};

export interface MockStats {
  measurement_origin: Record<string, string>;
  /**
   * `with_bearer`: upgrades that carried an `Authorization: Bearer` header. vllm-omni flavour:
   * `held_after_disconnect`, slots held now by sessions that ended without `session.close`;
   * `refused_full`, sessions refused with `resource_exhausted`; `blocked_turns`, turns that waited
   * for a playback acknowledgement.
   */
  sessions: { opened: number; completed: number; refused_503: number; active: number; with_bearer: number; held_after_disconnect?: number; refused_full?: number; blocked_turns?: number };
  appends: number;
  frames_sent: number;
  /** Socket errors of sessions (a peer that reset the connection, a bad frame): each also ends its session. */
  socket_errors: number;
  /** Per packet, as the mock saw it: (arrival − media start) − the session's smallest (arrival − media start). */
  arrival_deviation_ms: PercentilesMs;
  arrivals_late: number;
  event_loop_lag_ms: LoopLagFigures;
  cpu_cores: CpuFigures;
  /** Mock CPU seconds since start over appends received, in µs (idle time included: a load figure only for a mock started for one run). */
  cpu_us_per_append: number | null;
}

export interface MockServer {
  readonly url: string;
  readonly port: number;
  stats(): MockStats;
  close(): Promise<void>;
}

const PATH = '/v1/realtime';


/**
 * The mock server: the native dialect (sglang-omni duplex) or the openai one, answering at once
 * (append-echo) or like a duplex speech model. Reply frames come from templates built once, and
 * input audio is measured by its base64 length, never decoded.
 */
export async function startMockServer(options: MockServerOptions = {}, fault?: MockFault): Promise<MockServer> {
  const clock = options.clock ?? nodeTimerHost;
  const replies = options.replies_per_append ?? 3;
  const protocol = options.protocol ?? 'native';
  const profile = options.profile ?? 'append-echo';
  if (protocol === 'native' && profile === 'model') throw new RangeError('the native mock has the profiles append-echo, nemotron and minicpmo');
  if (protocol === 'native' && replies < 2) throw new RangeError('the native append-echo mock sends at least 2 events per unit (audio, unit done)');
  // Native: the profile fixes unit and output rate (append-echo speaks as nemotron); flags may override.
  const native = NATIVE_PROFILES[profile === 'minicpmo' ? 'minicpmo' : 'nemotron'];
  const input_rate = protocol === 'openai' ? (options.input_sample_rate ?? 24000) : 16000;
  const output_rate = options.output_sample_rate ?? (protocol === 'openai' ? 24000 : native.output_sample_rate);
  const unit_ms = options.unit_ms ?? (protocol === 'openai' ? 80 : native.native_unit_ms);
  // One output unit of audio per input unit, in whole samples.
  const output_unit_bytes = Math.floor((output_rate * unit_ms) / 1000) * 2;
  const outputPayload = Buffer.alloc(output_unit_bytes).toString('base64');
  const model: ModelOptions | null = profile === 'append-echo' ? null : { ...MODEL_DEFAULTS[profile], ...options.model };
  // nemotron keeps one response for the whole session: no turn setting changes that.
  if (model && profile === 'nemotron') model.turn_every_s = Infinity;
  const nativeOptions: NativeMockOptions = {
    grant: nativeGrant(output_rate, unit_ms, MOCK_LIMITS),
    replies_per_unit: replies,
    model,
  };

  // Sessions that ended are in `arrival` for good; open ones are added to a copy when stats are read.
  const arrival = createUsHistogram();
  let arrivalsLate = 0;
  const openArrivals = new Set<ArrivalOffsets>();
  const counts = { opened: 0, completed: 0, refused_503: 0, active: 0, with_bearer: 0, appends: 0, frames_sent: 0, socket_errors: 0 };
  const capacity = options.capacity_sessions;
  if (model && capacity !== undefined) model.load = () => counts.active / capacity;
  const loop = new LoopLagMonitor(10, clock).start();
  const cpu = new CpuMeter(clock);
  let nextId = 0;

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: true });
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
    // vLLM-Omni refuses a full server with an error event after the upgrade, not with HTTP 503.
    if (options.max_sessions !== undefined && !vllmFlavor && counts.active >= options.max_sessions) {
      counts.refused_503++;
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    if (/^Bearer \S/.test(req.headers.authorization ?? '')) counts.with_bearer++;
    wss.handleUpgrade(req, socket, head, (ws) => onSession(ws));
  });

  /**
   * A frame to a session. What one message calls for (an ack, audio, text and a unit done per
   * append) leaves in one socket write: the socket is corked on the first frame and uncorked once
   * the handler is done. Four writes per append were 42% of the mock's CPU at 512 sessions
   * (docs/performance.md), and each woke the client once more.
   */
  function send(ws: WebSocket, frame: string): void {
    counts.frames_sent++;
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
    arrivals: () => {
      const a = new ArrivalOffsets();
      openArrivals.add(a);
      return a;
    },
    arrivalsDone: (a) => {
      if (!openArrivals.delete(a)) return;
      counts.appends += a.count;
      a.forEachDeviation((d) => {
        recordMs(arrival, d);
        if (d > unit_ms) arrivalsLate++;
      });
    },
    completed: () => counts.completed++,
  };
  const openaiOptions: OpenAIMockOptions = {
    names: options.openai?.names ?? 'ga',
    vllm: options.openai?.vllm ?? false,
    silence_ms: options.openai?.silence_ms ?? 500,
    input_sample_rate: input_rate,
    output_sample_rate: output_rate,
    unit_ms,
    // append-echo answers each unit at once; the model profile keeps its latencies.
    model: model ?? { ttfp_ms: 0, rtf: 0, burst_units: 1, turn_every_s: options.model?.turn_every_s ?? 5 },
  };

  function onOpenAISession(ws: WebSocket, index: number, faulty: boolean): void {
    const session = new OpenAIMockSession(ws, host, `mock_${index}`, openaiOptions, outputPayload, faulty && fault ? fault : null);
    ws.on('error', countSocketError);
    ws.on('close', (code: number) => {
      counts.active--;
      if (code === 1000) host.completed();
      session.dispose();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => session.onMessage(data, isBinary, clock.now_s()));
    session.start();
  }

  const vllmFlavor = protocol === 'openai' && options.openai?.flavor === 'vllm-omni';
  const vllmOptions: VllmMockOptions = {
    output_sample_rate: output_rate,
    unit_ms,
    ttfp_ms: model?.ttfp_ms ?? 0,
    rtf: model?.rtf ?? 0,
    silence_ms: options.openai?.silence_ms ?? 500,
    listen_every: options.openai?.listen_every ?? 0,
    config_timeout_ms: options.openai?.config_timeout_ms ?? 10_000,
    journal_max_bytes: options.openai?.journal_max_bytes ?? 8 * 2 ** 20,
    require_ref_audio: options.openai?.require_ref_audio === true,
  };
  const vllm = { held: 0, graced: 0, refused_full: 0, blocked_turns: 0, graceTimers: new Set<() => void>() };

  function onVllmSession(ws: WebSocket, index: number): void {
    // A slot is taken by the opening session.update and held by every open session and, for the
    // grace, by one that ended without session.close.
    let held = false;
    const free = () => {
      if (!held) return;
      held = false;
      vllm.held--;
    };
    const slot = {
      limit: options.max_sessions,
      take: () => {
        if (options.max_sessions !== undefined && vllm.held >= options.max_sessions) {
          vllm.refused_full++;
          return false;
        }
        held = true;
        vllm.held++;
        return true;
      },
      released: free,
      disconnected: () => {
        vllm.graced++;
        const cancel = clock.arm(options.openai?.disconnect_grace_ms ?? 30_000, () => {
          vllm.graceTimers.delete(cancel);
          vllm.graced--;
          free();
        });
        vllm.graceTimers.add(cancel);
      },
    };
    const session = new VllmMockSession(ws, host, `mock_${index}`, vllmOptions, slot);
    ws.on('error', countSocketError);
    ws.on('close', () => {
      counts.active--;
      vllm.blocked_turns += session.blocked_turns;
      session.onSocketClose();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => session.onMessage(data, isBinary, clock.now_s()));
  }

  function onNativeSession(ws: WebSocket, index: number, faulty: boolean): void {
    const session = new NativeMockSession(ws, host, `mock_${index}`, nativeOptions, outputPayload, faulty && fault ? fault : null);
    ws.on('error', countSocketError);
    ws.on('close', () => {
      counts.active--;
      session.dispose();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => session.onMessage(data, isBinary, clock.now_s()));
    session.start();
  }

  /** A session's socket error: counted, and the session ends with its close (ws closes the socket after an error). */
  function countSocketError(): void {
    counts.socket_errors++;
  }

  function onSession(ws: WebSocket): void {
    counts.opened++;
    counts.active++;
    const index = nextId++;
    const faulty = fault !== undefined && index % (fault.every_nth_session ?? 1) === 0;
    if (vllmFlavor) onVllmSession(ws, index);
    else if (protocol === 'openai') onOpenAISession(ws, index, faulty);
    else onNativeSession(ws, index, faulty);
  }

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
    stats: () => {
      // Sessions still open count with what they sent so far, against their earliest offset so far.
      const all = createUsHistogram();
      all.add(arrival);
      let late = arrivalsLate;
      let appends = counts.appends;
      for (const a of openArrivals) {
        appends += a.count;
        a.forEachDeviation((d) => {
          recordMs(all, d);
          if (d > unit_ms) late++;
        });
      }
      const cpu_cores = cpu.figures();
      return {
        measurement_origin: {
          arrival_deviation_ms:
            protocol === 'openai'
              ? "per session: mock message-handler time of append N minus the audio before N (ms at the input rate), minus the session's smallest such offset; monotonic clock"
              : "per session: mock message-handler time of packet N minus its t_start_ms, minus the session's smallest such offset; monotonic clock",
          event_loop_lag_ms: 'mock process: lateness of a 10 ms timer',
          cpu_cores: 'mock process CPU seconds per wall second since start',
          cpu_us_per_append: 'mock process CPU seconds since start divided by appends received, in µs',
        },
        sessions: {
          opened: counts.opened,
          completed: counts.completed,
          refused_503: counts.refused_503,
          active: counts.active,
          with_bearer: counts.with_bearer,
          ...(vllmFlavor ? { held_after_disconnect: vllm.graced, refused_full: vllm.refused_full, blocked_turns: vllm.blocked_turns } : {}),
        },
        appends,
        frames_sent: counts.frames_sent,
        socket_errors: counts.socket_errors,
        arrival_deviation_ms: percentilesMs(all),
        arrivals_late: late,
        event_loop_lag_ms: loop.figures(),
        cpu_cores,
        cpu_us_per_append: cpu_cores.cpu_s !== undefined && appends > 0 ? Math.round((cpu_cores.cpu_s / appends) * 1e7) / 10 : null,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        loop.stop();
        for (const cancel of vllm.graceTimers) cancel();
        for (const client of wss.clients) client.terminate();
        wss.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
