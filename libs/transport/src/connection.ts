import type { createConnection } from 'node:net';
import { Observable, Subject } from 'rxjs';
import WebSocket from 'ws';
import { monotonicClock, timersOn, type Clock, type TimerHost } from '@duplex-bench/pacer';
import { clientFrame, decodeFrameBytes, ProtocolError, type DecodedFrame, sentStampOf } from '@duplex-bench/protocol';
import { TransportError } from './errors';
import { Fanout } from './fanout';
import { connectDirect, directReadsOf } from './direct-reads';
import { FrameReader } from './frame-reader';
import { processReads, type ReadBurst } from './read-burst';

// readyState values of the WebSocket standard, which ws uses: constants here, so loading this module
// reads nothing of ws (the bundle leaves ws unloaded in a process that opens no socket).
const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/** A frame as it arrived, stamped with the clock reading taken when the socket read that held its last byte reached the connection. */
export interface ReceivedEvent {
  frame: DecodedFrame;
  /** The frame's bytes as they arrived, for traces written without re-encoding. */
  raw: Buffer;
  received_s: number;
}

export interface ConnectOptions {
  clock?: Clock;
  /** The timers of the connect and close bounds and the 503 retry delay (default: real ones reading `clock`). */
  timers?: TimerHost;
  /** Bound on one upgrade attempt (TCP connect + HTTP upgrade). */
  connect_timeout_ms?: number;
  headers?: Record<string, string>;
  session_id?: string;
  /** Bound on the close handshake when a session ends on a fault; the socket is dropped after it. */
  close_timeout_ms?: number;
  /**
   * The largest frame taken from the server, bytes (default 8 MiB, sglang-omni's client limit): a
   * larger one ends the session as `frame_too_large` before it is buffered whole (ws `maxPayload`).
   */
  max_frame_bytes?: number;
  /**
   * Bytes the socket may queue unsent before the session ends as `send_backpressure` (default 1 MiB:
   * about 24 s of 16 kHz audio as base64, once the kernel's buffers are full): a server that stops
   * reading ends the session at once, not at the drain bound.
   */
  max_send_buffer_bytes?: number;
  /**
   * Called with each received frame's receive delay, ms, when the server stamped its send time
   * (protocol `stampSent`, our mocks with --stamp-sends): this client's receive stamp minus it, on
   * the host's monotonic clock.
   */
  on_sent_stamp?: (delay_ms: number, received_s: number) => void;
  /**
   * The loop's reads of one poll phase, over every connection of the process (default: the
   * process's own, on the host's clock and timers): past its bound the socket being read waits
   * for the next timers phase. A spec gives its own, with timers it fires.
   */
  reads?: ReadBurst;
  /** Makes the socket of each attempt (default: a ws WebSocket); the fake server of `./testing` gives its own. */
  socket?: (url: string, options: SocketOptions) => SocketLike;
}

/** What the connection asks of the socket it makes. */
export interface SocketOptions {
  perMessageDeflate: false;
  /** Frames past this many bytes are refused as they arrive (ws emits WS_ERR_UNSUPPORTED_MESSAGE_LENGTH and closes 1009). */
  maxPayload: number;
  generateMask(mask: Buffer): void;
  handshakeTimeout: number;
  headers?: Record<string, string>;
}

/**
 * The part of ws's WebSocket the connection uses: its states, sends, closes and events (`open`,
 * `message` (data, isBinary), `error` (err with ws's messages: "Unexpected server response: 503"),
 * `close` (code, reason)).
 */
export interface SocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | Buffer, cb?: (err?: Error | null) => void): void;
  send(data: string | Buffer, options: { binary: boolean }, cb?: (err?: Error | null) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'open', listener: () => void): unknown;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: 'error', listener: (err: Error & { code?: string }) => void): unknown;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

function wsSocket(url: string, options: SocketOptions): SocketLike {
  // A ws: socket reads into a buffer of its own (`DirectReads`); a TLS one as Node reads.
  return new WebSocket(url, url.startsWith('ws:') ? { ...options, createConnection: connectDirect as unknown as typeof createConnection } : options);
}

const DEFAULTS = { connect_timeout_ms: 10_000, close_timeout_ms: 2000, max_frame_bytes: 8 * 2 ** 20, max_send_buffer_bytes: 2 ** 20 };

/**
 * Client frames carry a masking key (RFC 6455 5.3), and every frame here does; the key is zero. A
 * random key guards proxies that cache by content, none of which stands between a load generator
 * and the server it measures; the server unmasks either at the same cost. With a zero key ws sends
 * the frame's string as it is, where a random one costs a Buffer copy of each append and an XOR
 * pass over it (measured in docs/performance.md).
 */
function zeroMask(mask: Buffer): void {
  mask[0] = mask[1] = mask[2] = mask[3] = 0;
}
/** ws sends a Buffer as a binary frame unless told otherwise. */
const TEXT_FRAME = { binary: false };

/** What of ws's WebSocket internals a direct write reads (ws 8): its socket, and whether its sender holds anything back. */
interface WsInternals {
  _socket?: { write(data: Uint8Array, cb: (err?: Error | null) => void): boolean; cork?(): void; uncork?(): void } | null;
  _sender?: { _state?: number; _firstFragment?: boolean; _queue?: unknown[] };
}

/** What of ws's WebSocket internals the direct reading uses (ws 8): its socket's listeners, its receiver's state, its pong. */
interface WsReadInternals {
  _socket?: {
    listeners(event: 'data'): Array<(...args: unknown[]) => void>;
    removeListener(event: 'data', l: (chunk: Buffer) => void): unknown;
    on(event: 'data', l: (chunk: Buffer) => void): unknown;
    pause(): unknown;
    resume(): unknown;
    read(): Buffer | null;
    readonly readableLength: number;
    prependListener(event: 'close', l: () => void): unknown;
  } | null;
  _receiver?: { _state?: number; _bufferedBytes?: number };
  pong?(data: Buffer): void;
}

/**
 * The socket under a ws client, when a frame written to it now goes in order: the sender queues
 * nothing (its state is DEFAULT, 0, and no fragmented message is open). Null otherwise (a spec's
 * fake, or a sender mid-message), and the frame goes through ws.
 */
function directSocket(ws: SocketLike): NonNullable<WsInternals['_socket']> | null {
  const w = ws as unknown as WsInternals;
  const sender = w._sender;
  if (!w._socket || !sender || sender._state !== 0 || sender._firstFragment !== true || (sender._queue?.length ?? 0) > 0) return null;
  return w._socket;
}
const UNEXPECTED_STATUS = /Unexpected server response: (\d+)/;

/**
 * One session's connection to a server, as the session and the dialects' flows use it. Frames
 * come out of `events$` from the first one (subscribe before awaiting `opened`); the stream errors
 * with a TransportError or ProtocolError when the session breaks, and completes when it closes
 * after `close()` was asked for. `WsConnection` is the WebSocket one; a spec drives a session
 * through the fake one of `@duplex-bench/transport/testing`, its server scripted in virtual time.
 */
export interface Connection {
  readonly url: string;
  readonly events$: Observable<ReceivedEvent>;
  /** The session's end alone: errors as events$ does, completes when it does, and carries no frame. */
  readonly ended$: Observable<never>;
  /** Resolves when the upgrade succeeded; rejects with a TransportError. */
  readonly opened: Promise<void>;
  /** The timers every wait on this connection uses: its own bounds and its flow's. */
  readonly timers: TimerHost;
  /** Bytes queued in the socket and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  readonly isOpen: boolean;
  /** Hands a text frame (a string, or its UTF-8 bytes) to the socket; a failure arrives later through events$. */
  send(frame: string | Buffer): void;
  /** Holds the frames sent from now until `uncork` for one write to the kernel (Node's `socket.cork`); absent where there is no socket. */
  cork?(): void;
  uncork?(): void;
  /** Sets the frame `fail` sends before its close frame while the socket is open (null: nothing to say). */
  setFarewell(farewell: () => string | null): void;
  /** Closes normally; waits at most `timeout_ms`, then drops the socket. events$ completes. */
  close(timeout_ms?: number): Promise<void>;
  /** Ends the session with `error` (it arrives through events$) and closes the socket with a close frame. */
  fail(error: Error): void;
}

/** Opens a connection: `WsConnection.open`, or a spec's fake. */
export type Connect = (url: string, options: ConnectOptions) => Connection;

/** One WebSocket session to a server (see `Connection`). */
export class WsConnection implements Connection {
  readonly events$: Observable<ReceivedEvent>;
  /**
   * The session's end alone: errors as events$ does, completes when it does, and carries no frame.
   * A watcher of the end subscribes here, so frames are not handed to one more subscriber each.
   */
  readonly ended$: Observable<never>;
  /** Resolves when the upgrade succeeded; rejects with a TransportError. */
  readonly opened: Promise<void>;
  /** Upgrade attempts made (one: a refused one is retried by admission, on a new connection). */
  attempts = 0;
  private readonly frames = new Fanout<ReceivedEvent>();
  private readonly end$ = new Subject<never>();
  private readonly clock: Clock;
  /** The timers every wait on this connection uses: its own bounds and its flow's. */
  readonly timers: TimerHost;
  private ws: SocketLike | null = null;
  /** The dialect's last frame before a failed session's close frame (vLLM-Omni: `session.close`). */
  private farewell: (() => string | null) | null = null;
  private closing = false;
  private ended = false;
  private readonly onSent = (err?: Error | null): void => {
    if (err) this.fail(new TransportError('send_failed', `send failed: ${err.message}`, this.context()));
  };

  private constructor(
    readonly url: string,
    private readonly options: ConnectOptions,
  ) {
    this.clock = options.clock ?? monotonicClock;
    this.timers = options.timers ?? timersOn(this.clock);
    this.events$ = this.frames.observable;
    this.ended$ = this.end$.asObservable();
    this.opened = this.openOnce();
    // The failure is also delivered through events$; this keeps an unawaited promise from being unhandled.
    this.opened.catch(() => undefined);
  }

  static open(url: string, options: ConnectOptions = {}): WsConnection {
    return new WsConnection(url, options);
  }

  /** Bytes queued in the socket and not yet handed to the kernel. */
  get bufferedAmount(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  get isOpen(): boolean {
    return this.ws?.readyState === OPEN;
  }

  /** Hands a text frame (a string, or its UTF-8 bytes) to the socket; a failure arrives later through events$. */
  send(frame: string | Buffer): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) {
      this.fail(new TransportError('send_failed', 'send on a socket that is not open', this.context()));
      return;
    }
    if (typeof frame === 'string') ws.send(frame, this.onSent);
    else {
      // A spliced append is framed in place and written as one buffer: ws would write its header and
      // the payload as two (a writev), through its sender, for the same bytes on the wire.
      const framed = clientFrame(frame);
      const socket = framed ? directSocket(ws) : null;
      if (framed && socket) socket.write(framed, this.onSent);
      else ws.send(frame, TEXT_FRAME, this.onSent);
    }
    const limit = this.options.max_send_buffer_bytes ?? DEFAULTS.max_send_buffer_bytes;
    if (ws.bufferedAmount > limit) {
      this.fail(new TransportError('send_backpressure', `the server stopped reading: ${ws.bufferedAmount} bytes queued unsent, past --max-send-buffer-bytes ${limit}`, this.context()));
    }
  }

  /** Holds the frames sent from now until `uncork` for one write to the kernel. */
  cork(): void {
    (this.ws as unknown as WsInternals | null)?._socket?.cork?.();
  }

  uncork(): void {
    (this.ws as unknown as WsInternals | null)?._socket?.uncork?.();
  }

  /**
   * Sets the frame `fail` sends before its close frame while the socket is open; it returns null
   * when there is nothing to say (the dialect already said goodbye).
   */
  setFarewell(farewell: () => string | null): void {
    this.farewell = farewell;
  }

  /** Closes normally; waits at most `timeout_ms`, then drops the socket. events$ completes. */
  close(timeout_ms = 2000): Promise<void> {
    this.closing = true;
    const ws = this.ws;
    if (!ws || ws.readyState === CLOSED) {
      this.finish();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const cancel = this.timers.arm(timeout_ms, () => {
        ws.terminate();
        resolve();
      });
      ws.once('close', () => {
        cancel();
        resolve();
      });
      if (ws.readyState === OPEN || ws.readyState === CONNECTING) ws.close(1000, 'done');
    });
  }

  /**
   * Ends the session with `error` (it arrives through events$) and closes the socket with a close
   * frame, dropping it only if the server does not answer within `close_timeout_ms`: a server may
   * still be sending its own close, and one dropped without a close frame logs a lost connection.
   */
  fail(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.closing = true;
    const ws = this.ws;
    if (ws && ws.readyState === OPEN) {
      const last = this.farewell?.();
      if (last) ws.send(last);
      const cancel = this.timers.arm(this.options.close_timeout_ms ?? DEFAULTS.close_timeout_ms, () => ws.terminate());
      ws.once('close', () => cancel());
      ws.close(1000, 'done');
    } else if (ws && ws.readyState === CONNECTING) {
      ws.terminate();
    }
    this.frames.error(error);
    this.end$.error(error);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.frames.complete();
    this.end$.complete();
  }

  private context() {
    return { url: this.url, session_id: this.options.session_id, attempts: this.attempts };
  }

  /**
   * One upgrade: a refusal (HTTP 503 from a full server among them) fails it as `connect_failed`
   * with the status; retrying a full server is admission's (`admitted`, ./admission.ts).
   */
  private async openOnce(): Promise<void> {
    this.attempts++;
    try {
      await this.attempt();
    } catch (err) {
      this.fail(err as Error);
      throw err;
    }
  }

  private attempt(): Promise<void> {
    const timeout_ms = this.options.connect_timeout_ms ?? DEFAULTS.connect_timeout_ms;
    return new Promise((resolve, reject) => {
      const ws = (this.options.socket ?? wsSocket)(this.url, {
        perMessageDeflate: false,
        maxPayload: this.options.max_frame_bytes ?? DEFAULTS.max_frame_bytes,
        generateMask: zeroMask,
        handshakeTimeout: timeout_ms,
        headers: this.options.headers,
      });
      this.ws = ws;
      let open = false;
      const cancelTimeout = this.timers.arm(timeout_ms, () => {
        ws.terminate();
        reject(new TransportError('connect_timeout', `no WebSocket upgrade within ${timeout_ms} ms`, this.context()));
      });
      ws.on('open', () => {
        open = true;
        cancelTimeout();
        this.readFramesDirectly(ws);
        resolve();
      });
      ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary, this.clock.now_s()));
      ws.on('error', (err: Error & { code?: string }) => {
        cancelTimeout();
        if (open) {
          if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
            // ws stopped reading the frame at the bound, kept none of it, and closes with 1009.
            const max = this.options.max_frame_bytes ?? DEFAULTS.max_frame_bytes;
            this.fail(new TransportError('frame_too_large', `the server sent a frame over --max-frame-bytes ${max} (${err.message})`, { ...this.context(), errno: err.code }));
            return;
          }
          this.fail(new TransportError('server_closed', `socket error: ${err.message}`, { ...this.context(), errno: err.code }));
          return;
        }
        const status = UNEXPECTED_STATUS.exec(err.message);
        if (status) {
          reject(new TransportError('connect_failed', `upgrade refused with HTTP ${status[1]}`, { ...this.context(), status: Number(status[1]) }));
        } else if (/timed out/i.test(err.message)) {
          reject(new TransportError('connect_timeout', `no WebSocket upgrade within ${timeout_ms} ms`, this.context()));
        } else {
          reject(new TransportError('connect_failed', `cannot connect to ${this.url}: ${err.code ?? err.message}`, { ...this.context(), errno: err.code }));
        }
      });
      ws.on('close', (code: number, reason: Buffer) => {
        cancelTimeout();
        if (!open) return;
        if (this.closing) this.finish();
        else {
          const text = reason.toString();
          this.fail(
            new TransportError('server_closed', `server closed the session (code ${code}${text ? `, ${text}` : ''})`, {
              ...this.context(),
              close_code: code,
              close_reason: text,
            }),
          );
        }
      });
    });
  }

  /**
   * From the open on, the socket's bytes go to a `FrameReader` instead of ws's receiver: whole data
   * frames straight to `onMessage`, pings answered through ws. At the first frame the reader does
   * not take (a close, a fragment, anything odd) ws's own reader gets the bytes back, from that
   * frame on, and keeps them. Left to ws when its internals are not as read here (ws 8; a spec's fake).
   * A full read that ends with the loop's reads past their bound (`ReadBurst`) pauses the socket until
   * the next timers phase; its frames are then stamped when they are read, later.
   */
  private readFramesDirectly(ws: SocketLike): void {
    const w = ws as unknown as WsReadInternals;
    const socket = w._socket;
    const receiver = w._receiver;
    const wsOnData = socket?.listeners('data').find((l) => l.name === 'socketOnData') as ((this: unknown, chunk: Buffer) => void) | undefined;
    if (!socket || !receiver || !wsOnData || receiver._state !== 0 || receiver._bufferedBytes !== 0) return;
    // The socket's own read buffer, when it has one: a read comes as a view of it, overwritten by the next.
    const direct = directReadsOf(socket);
    const reader = new FrameReader(
      {
        message: (payload, isBinary) => this.onMessage(payload, isBinary, read_s),
        ping: (payload) => w.pong?.(payload),
        handOff: (rest) => {
          direct?.giveBack();
          socket.removeListener('data', onData);
          socket.on('data', wsOnData);
          // ws's reader may keep the bytes: a view of the socket's own buffer is copied first.
          wsOnData.call(socket, direct ? Buffer.from(rest) : rest);
        },
      },
      this.options.max_frame_bytes ?? DEFAULTS.max_frame_bytes,
    );
    // The frames of one read arrived together: they get the read's stamp, not one each taken as the
    // frames before them are handed on (that would add this client's own work to their times).
    let read_s = 0;
    const reads = this.options.reads ?? processReads;
    const onData = (chunk: Buffer) => {
      read_s = this.clock.now_s();
      reads.begin();
      reader.push(chunk);
      // A full read (more waiting: a flood) after reads that have held the loop past the bound: this
      // socket waits for the next timers phase, so the deadlines due meanwhile are sent first. Its
      // bytes wait in the kernel (and, read through Node's stream, in the stream).
      if (reads.holds(chunk.length) && !reader.gaveUp && !this.ended) {
        socket.pause();
        reads.later(() => socket.resume());
      }
    };
    socket.removeListener('data', wsOnData);
    // Bytes already in the stream (those read with the upgrade's response), and every read of a socket without its own buffer.
    socket.on('data', onData);
    direct?.take(onData);
    // A socket closed while paused (a reset, a dropped socket) still holds bytes read from it: they go
    // to the reader, which holds the part of a frame before them, ahead of ws's close handler (it
    // would hand them to ws's receiver, which never saw that part).
    socket.prependListener('close', () => {
      if (reader.gaveUp || socket.readableLength === 0) return;
      socket.removeListener('data', onData);
      const rest = socket.read();
      if (rest) onData(rest);
    });
  }

  /** A whole frame, stamped `received_s`: when the socket read that held its last byte was taken. */
  private onMessage(data: Buffer, isBinary: boolean, received_s: number): void {
    if (this.ended) return;
    if (isBinary) {
      this.fail(new ProtocolError('MALFORMED_FRAME', `binary frame of ${data.length} bytes on a text-only dialect`));
      return;
    }
    let frame: DecodedFrame;
    try {
      frame = decodeFrameBytes(data);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    const onStamp = this.options.on_sent_stamp;
    if (onStamp) {
      const sent_ms = sentStampOf(data);
      if (sent_ms !== null) onStamp(received_s * 1000 - sent_ms, received_s);
    }
    this.frames.next({ frame, raw: data, received_s });
  }
}
