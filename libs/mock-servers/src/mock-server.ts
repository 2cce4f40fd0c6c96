import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';
import { pcm16BytesPerMs } from '@duplex-bench/audio';
import {
  base64ByteLength,
  decodeFrame,
  defaultNativeGrant,
  NativeAudioDeltaTemplate,
  nativeAccepted,
  nativeAudioDone,
  nativeDrained,
  NativeEvent,
  nativeInputEnded,
  nativeResponseCreated,
  nativeResponseDone,
  nativeSessionClosed,
  nativeSessionCreated,
  nativeSessionUpdated,
  nativeTextDelta,
  nativeUnitDone,
  nativeError,
  type DecodedFrame,
} from '@duplex-bench/protocol';
import { ModelSession, type ModelOptions } from './model-session';
import { NativeTurnFrames } from './turn-frames';
import type { MockFault } from './mock-fault';
import { OpenAIMockSession, type MockHost, type OpenAIMockOptions } from './openai-mock-session';
import { CpuMeter, createUsHistogram, LoopLagMonitor, percentilesMs, recordMs, type PercentilesMs, type LoopLagFigures, type CpuFigures } from '@duplex-bench/metrics';

export interface MockServerOptions {
  /** Wire dialect: sglang-omni `native` (default) or OpenAI Realtime `openai`. */
  protocol?: 'native' | 'openai';
  /** The openai dialect's settings: event names, vLLM-Omni extensions, VAD silence. */
  openai?: Partial<Pick<OpenAIMockOptions, 'names' | 'vllm' | 'silence_ms'>>;
  /** Serve `wss://` with this key and certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Events sent back per input unit: an audio delta, then text deltas, then `sglang.unit.done`. */
  replies_per_append?: number;
  output_sample_rate?: number;
  input_sample_rate?: number;
  unit_ms?: number;
  /** Sessions held at once; further upgrades get HTTP 503. */
  max_sessions?: number;
  /** `model` answers like a duplex speech model (turns, first-packet latency, real-time factor, bursts). */
  profile?: 'append-echo' | 'model';
  model?: Partial<ModelOptions>;
  clock?: Clock;
}


export interface MockStats {
  measurement_origin: Record<string, string>;
  /** `with_bearer`: upgrades that carried an `Authorization: Bearer` header. */
  sessions: { opened: number; completed: number; refused_503: number; active: number; with_bearer: number };
  appends: number;
  frames_sent: number;
  /** Per packet, as the mock saw it: arrival − (arrival of packet 0 + (t_start_ms − t_start_ms of packet 0)). */
  arrival_deviation_ms: PercentilesMs;
  arrivals_late: number;
  event_loop_lag_ms: LoopLagFigures;
  cpu_cores: CpuFigures;
}

export interface MockServer {
  readonly url: string;
  readonly port: number;
  stats(): MockStats;
  close(): Promise<void>;
}

const PATH = '/v1/realtime';

interface SessionState {
  id: string;
  faulty: boolean;
  accepted_bytes: number;
  /** Bytes received beyond the last whole unit. */
  pending_bytes: number;
  units: number;
  chunk_seq: number;
  appends: number;
  first_arrival_s: number;
  first_t_start_ms: number;
  response_started: boolean;
  silent: boolean;
  model: ModelSession | null;
  input_units: number;
}

/**
 * The append-echo mock: native dialect, no model. It acks every append and answers every whole
 * input unit with `replies_per_append` events. Reply frames come from templates built once, and
 * input audio is measured by its base64 length, never decoded.
 */
export async function startMockServer(options: MockServerOptions = {}, fault?: MockFault): Promise<MockServer> {
  const clock = options.clock ?? monotonicClock;
  const replies = options.replies_per_append ?? 3;
  const protocol = options.protocol ?? 'native';
  const input_rate = options.input_sample_rate ?? (protocol === 'openai' ? 24000 : 16000);
  const output_rate = options.output_sample_rate ?? (protocol === 'openai' ? 24000 : 22050);
  const unit_ms = options.unit_ms ?? 80;
  const unit_bytes = pcm16BytesPerMs(input_rate) * unit_ms;
  const in_bytes_per_ms = pcm16BytesPerMs(input_rate);
  const output_unit_bytes = Math.round((output_rate * unit_ms) / 1000) * 2;
  const grant = defaultNativeGrant(input_rate, output_rate, unit_ms);
  const response_id = 'resp_0';
  const item_id = 'item_0';
  const outputPayload = Buffer.alloc(output_unit_bytes).toString('base64');
  const audio = new NativeAudioDeltaTemplate(response_id, item_id, outputPayload);
  const model: ModelOptions | null =
    options.profile === 'model' ? { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: 5, ...options.model } : null;
  const text = nativeTextDelta(response_id, item_id, ' ');
  const responseCreated = nativeResponseCreated(response_id);

  const arrival = createUsHistogram();
  let arrivalsLate = 0;
  const counts = { opened: 0, completed: 0, refused_503: 0, active: 0, with_bearer: 0, appends: 0, frames_sent: 0 };
  const loop = new LoopLagMonitor(10, clock).start();
  const cpu = new CpuMeter(clock);
  let nextId = 0;

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: true });
  const notFound = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(404).end();
  };
  const http: Server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, notFound) : createServer(notFound);
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    if (options.max_sessions !== undefined && counts.active >= options.max_sessions) {
      counts.refused_503++;
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    if (/^Bearer \S/.test(req.headers.authorization ?? '')) counts.with_bearer++;
    wss.handleUpgrade(req, socket, head, (ws) => onSession(ws));
  });

  function send(ws: WebSocket, frame: string): void {
    counts.frames_sent++;
    ws.send(frame);
  }

  function emitUnit(ws: WebSocket, s: SessionState, last: boolean): void {
    const unit_id = s.units++;
    const t_start_ms = unit_id * unit_ms;
    if (replies >= 1) send(ws, audio.encode(unit_id, s.chunk_seq++, t_start_ms, unit_ms));
    for (let i = 2; i < replies; i++) send(ws, text);
    if (replies >= 2 && !last) send(ws, nativeUnitDone(unit_id, t_start_ms, unit_ms));
  }

  function onAppend(ws: WebSocket, s: SessionState, frame: DecodedFrame, arrived_s: number): void {
    const event = frame.event();
    const sglang = (event.sglang ?? {}) as { seq?: number; t_start_ms?: number };
    const seq = typeof sglang.seq === 'number' ? sglang.seq : s.appends;
    const t_start_ms = typeof sglang.t_start_ms === 'number' ? sglang.t_start_ms : seq * unit_ms;
    if (s.appends === 0) {
      s.first_arrival_s = arrived_s;
      s.first_t_start_ms = t_start_ms;
    }
    const dev_ms = (arrived_s - s.first_arrival_s) * 1000 - (t_start_ms - s.first_t_start_ms);
    recordMs(arrival, Math.abs(dev_ms));
    if (Math.abs(dev_ms) > unit_ms) arrivalsLate++;
    s.appends++;
    counts.appends++;
    const bytes = typeof event.audio === 'string' ? base64ByteLength(event.audio) : 0;
    s.accepted_bytes += bytes;
    s.pending_bytes += bytes;
    if (fault && s.faulty && s.appends >= fault.after_appends && applyFault(ws, s, fault)) return;
    send(ws, nativeAccepted(seq, s.accepted_bytes / in_bytes_per_ms, String(event.event_id ?? '')));
    if (!s.response_started && !s.model) {
      s.response_started = true;
      send(ws, responseCreated);
    }
    while (s.pending_bytes >= unit_bytes) {
      s.pending_bytes -= unit_bytes;
      if (s.model) s.model.onInputUnit(s.input_units++);
      else emitUnit(ws, s, false);
    }
  }

  /** Returns true when the append must not be answered. */
  function applyFault(ws: WebSocket, s: SessionState, f: MockFault): boolean {
    switch (f.action) {
      case 'close':
        ws.close(1011, 'injected fault');
        return true;
      case 'malformed_frame':
        send(ws, '{"type":"response.output_audio.delta","delta":');
        return true;
      case 'fatal_error':
        send(ws, nativeError('injected_fault', 'the test server gave up', true));
        return true;
      case 'stop_answering':
        s.silent = true;
        return true;
      case 'skip_event_seq':
        return false;
      case 'unknown_event':
        if (s.appends === f.after_appends) send(ws, '{"type":"vendor.keepalive"}');
        return false;
      default: {
        const never: never = f.action;
        throw new Error(`unknown fault ${String(never)}`);
      }
    }
  }

  function onInputEnd(ws: WebSocket, s: SessionState, frame: DecodedFrame): void {
    const client_event_id = String(frame.event().event_id ?? '');
    const accepted_end_ms = s.accepted_bytes / in_bytes_per_ms;
    send(ws, nativeInputEnded(client_event_id, accepted_end_ms));
    const tail = s.pending_bytes;
    const padding_bytes = tail > 0 ? unit_bytes - tail : 0;
    const padding_ms = padding_bytes / in_bytes_per_ms;
    const drained = nativeDrained(client_event_id, { accepted_end_ms, consumed_ms: accepted_end_ms + padding_ms, discarded_ms: 0, padding_ms });
    if (s.model) {
      // The model finishes its output at its own pace: last audio, audio done, response done, last unit done, drained.
      s.model.onInputEnd(tail > 0, (lastUnit) => {
        if (lastUnit !== null) send(ws, nativeUnitDone(lastUnit, lastUnit * unit_ms, unit_ms));
        send(ws, drained);
      });
      return;
    }
    if (tail > 0) emitUnit(ws, s, true);
    send(ws, nativeAudioDone(response_id, item_id));
    send(ws, nativeResponseDone(response_id));
    if (tail > 0 && replies >= 2) send(ws, nativeUnitDone(s.units - 1, (s.units - 1) * unit_ms, unit_ms));
    send(ws, drained);
  }

  const host: MockHost = {
    clock,
    send,
    appended: (dev_ms) => {
      recordMs(arrival, Math.abs(dev_ms));
      if (Math.abs(dev_ms) > unit_ms) arrivalsLate++;
      counts.appends++;
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
    ws.on('error', () => undefined);
    ws.on('close', (code: number) => {
      counts.active--;
      if (code === 1000) host.completed();
      session.dispose();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => session.onMessage(data, isBinary, clock.now_s()));
    session.start();
  }

  function onSession(ws: WebSocket): void {
    counts.opened++;
    counts.active++;
    const index = nextId++;
    if (protocol === 'openai') {
      onOpenAISession(ws, index, fault !== undefined && index % (fault.every_nth_session ?? 1) === 0);
      return;
    }
    const s: SessionState = {
      id: `mock_${index}`,
      faulty: fault !== undefined && index % (fault.every_nth_session ?? 1) === 0,
      accepted_bytes: 0,
      pending_bytes: 0,
      units: 0,
      chunk_seq: 0,
      appends: 0,
      first_arrival_s: 0,
      first_t_start_ms: 0,
      response_started: false,
      silent: false,
      model: model ? new ModelSession(model, unit_ms, new NativeTurnFrames(outputPayload), clock, (frame) => send(ws, frame)) : null,
      input_units: 0,
    };
    ws.on('error', () => undefined);
    ws.on('close', () => {
      counts.active--;
      s.model?.dispose();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const arrived_s = clock.now_s();
      if (s.silent) return;
      if (isBinary) {
        send(ws, nativeError('binary_frame', 'text frames only', true));
        return;
      }
      let frame: DecodedFrame;
      try {
        frame = decodeFrame(data.toString('utf8'));
      } catch {
        send(ws, nativeError('malformed_frame', 'frame is not a JSON event', false));
        return;
      }
      switch (frame.type) {
        case NativeEvent.append:
          onAppend(ws, s, frame, arrived_s);
          break;
        case NativeEvent.sessionUpdate:
          send(ws, nativeSessionUpdated(s.id, grant));
          break;
        case NativeEvent.inputEnd:
          onInputEnd(ws, s, frame);
          break;
        case NativeEvent.sessionClose:
          counts.completed++;
          send(ws, nativeSessionClosed(String(frame.event().event_id ?? '')));
          // The client closes; a client that does not is dropped.
          setTimeout(() => ws.terminate(), 5000).unref();
          break;
        default:
          break;
      }
    });
    send(ws, nativeSessionCreated(s.id));
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
    stats: () => ({
      measurement_origin: {
        arrival_deviation_ms:
          protocol === 'openai'
            ? 'mock message-handler time of append N minus (that of append 0 + the audio before N, in ms at the input rate), monotonic clock'
            : 'mock message-handler time of packet N minus (that of packet 0 + t_start_ms of N - t_start_ms of 0), monotonic clock',
        event_loop_lag_ms: 'mock process: lateness of a 10 ms timer',
        cpu_cores: 'mock process CPU seconds per wall second since start',
      },
      sessions: { opened: counts.opened, completed: counts.completed, refused_503: counts.refused_503, active: counts.active, with_bearer: counts.with_bearer },
      appends: counts.appends,
      frames_sent: counts.frames_sent,
      arrival_deviation_ms: percentilesMs(arrival),
      arrivals_late: arrivalsLate,
      event_loop_lag_ms: loop.figures(),
      cpu_cores: cpu.figures(),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        loop.stop();
        for (const client of wss.clients) client.terminate();
        wss.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
