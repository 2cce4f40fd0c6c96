import { EventEmitter } from 'node:events';
import type { TimerHost } from '@duplex-bench/pacer';
import { WsConnection, type Connect, type SocketLike, type SocketOptions } from './connection';

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** How one upgrade is answered: accepted (the handler scripts the session), refused with an HTTP status, or never. */
export type FakeUpgrade = { accept: (side: FakeServerSide) => void } | { refuse: number } | 'hang';

/** One accepted session seen from the server: what the client sent, and what the spec makes the server do. */
export interface FakeServerSide {
  /** Every text frame the client sent, parsed, in order. */
  readonly received: Array<Record<string, unknown>>;
  /** Called at each client frame (parsed), after it joined `received`. */
  onMessage(handler: (event: Record<string, unknown>) => void): void;
  /** Sends a text frame (an object is JSON-encoded) after `delay_ms` on the virtual clock. */
  send(event: Record<string, unknown> | string, delay_ms?: number): void;
  /** Sends `events` as one socket read: the client gets them one after another with no turn of its loop between them, as ws emits the frames of one read. */
  sendAll(events: Array<Record<string, unknown> | string>, delay_ms?: number): void;
  /** Runs `fn` after `delay_ms` on the virtual clock (a server's own timer). */
  later(delay_ms: number, fn: () => void): void;
  /** Sends a binary frame. */
  sendBinary(bytes: Buffer): void;
  /** Closes the socket from the server's side with a close frame. */
  close(code?: number, reason?: string): void;
  /** Drops the connection without a close frame (the client sees code 1006). */
  drop(): void;
  /** Whether the server answers the client's close frame (default true); false lets the client's close bound run out. */
  answersClose: boolean;
  /** The client's `bufferedAmount` as the spec sets it (a server that stops reading). */
  buffered: number;
  /** The close frame the client sent, once it did. */
  readonly clientClose: { code: number; reason: string } | null;
  /** The socket was dropped by the client (`terminate`). */
  readonly terminated: boolean;
}

/**
 * A WebSocket server in virtual time, for specs: `connect` opens `WsConnection`s whose socket is a
 * fake one, so everything above the socket (decoding, stamping, failures, close bounds) runs as it
 * does on a real socket. Every delivery, either way, goes through `timers` (0 ms by default):
 * nothing happens until the spec runs them (`VirtualTime.run`).
 */
export class FakeServer {
  /** Every upgrade asked for, in order, with the headers sent. */
  readonly upgrades: Array<{ url: string; headers?: Record<string, string> }> = [];
  /** Every accepted session, in order. */
  readonly sessions: FakeServerSide[] = [];

  constructor(
    private readonly timers: TimerHost,
    /** How the n-th upgrade (from 0) is answered. */
    private readonly answer: (n: number) => FakeUpgrade,
  ) {}

  /** Opens a connection through this server: use it where a session takes `connect`. */
  readonly connect: Connect = (url, options) =>
    WsConnection.open(url, { ...options, timers: options.timers ?? this.timers, clock: options.clock ?? this.timers, socket: (u, o) => this.socket(u, o) });

  private socket(url: string, options: SocketOptions): SocketLike {
    const n = this.upgrades.length;
    this.upgrades.push({ url, ...(options.headers ? { headers: options.headers } : {}) });
    const socket = new FakeSocket(this.timers);
    const answer = this.answer(n);
    if (answer === 'hang') return socket;
    this.timers.arm(0, () => {
      if (socket.readyState !== CONNECTING) return;
      if ('refuse' in answer) socket.refuse(answer.refuse);
      else {
        const side = socket.accept();
        this.sessions.push(side);
        answer.accept(side);
      }
    });
    return socket;
  }
}

/** The client's socket; its server side is the `FakeServerSide` it hands out on accept. */
class FakeSocket extends EventEmitter implements SocketLike {
  readyState = CONNECTING;
  private side: Side | null = null;

  constructor(private readonly timers: TimerHost) {
    super();
  }

  get bufferedAmount(): number {
    return this.side?.buffered ?? 0;
  }

  accept(): Side {
    this.readyState = OPEN;
    this.side = new Side(this, this.timers);
    this.emit('open');
    return this.side;
  }

  refuse(status: number): void {
    this.readyState = CLOSED;
    this.emit('error', new Error(`Unexpected server response: ${status}`));
    this.emit('close', 1006, Buffer.alloc(0));
  }

  send(data: string | Buffer, a?: unknown, b?: unknown): void {
    const cb = (typeof a === 'function' ? a : b) as ((err?: Error | null) => void) | undefined;
    const side = this.side;
    if (this.readyState !== OPEN || !side) {
      cb?.(new Error('WebSocket is not open'));
      return;
    }
    const text = typeof data === 'string' ? data : data.toString('utf8');
    this.timers.arm(0, () => side.deliver(text));
    cb?.();
  }

  close(code = 1005, reason = ''): void {
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    if (this.readyState === CONNECTING) {
      this.terminate();
      return;
    }
    this.readyState = CLOSING;
    const side = this.side as Side;
    side.clientClose = { code, reason };
    if (side.answersClose) this.timers.arm(0, () => this.closed(code, reason));
  }

  terminate(): void {
    if (this.readyState === CLOSED) return;
    const was = this.readyState;
    this.readyState = CLOSED;
    if (this.side) this.side.terminated = true;
    // As ws does, on a later tick: the caller's own verdict (a connect bound) comes first.
    this.timers.arm(0, () => {
      if (was === CONNECTING) this.emit('error', new Error('WebSocket was closed before the connection was established'));
      this.emit('close', 1006, Buffer.alloc(0));
    });
  }

  /** The close handshake is over (either side began it). */
  closed(code: number, reason: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', code, Buffer.from(reason));
  }

  /** A frame from the server. */
  receive(data: Buffer, isBinary: boolean): void {
    if (this.readyState === OPEN) this.emit('message', data, isBinary);
  }
}

class Side implements FakeServerSide {
  readonly received: Array<Record<string, unknown>> = [];
  answersClose = true;
  buffered = 0;
  clientClose: { code: number; reason: string } | null = null;
  terminated = false;
  private handler: ((event: Record<string, unknown>) => void) | null = null;

  constructor(
    private readonly socket: FakeSocket,
    private readonly timers: TimerHost,
  ) {}

  onMessage(handler: (event: Record<string, unknown>) => void): void {
    this.handler = handler;
  }

  deliver(text: string): void {
    const event = JSON.parse(text) as Record<string, unknown>;
    this.received.push(event);
    this.handler?.(event);
  }

  send(event: Record<string, unknown> | string, delay_ms = 0): void {
    const text = typeof event === 'string' ? event : JSON.stringify(event);
    this.timers.arm(delay_ms, () => this.socket.receive(Buffer.from(text), false));
  }

  sendAll(events: Array<Record<string, unknown> | string>, delay_ms = 0): void {
    const texts = events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
    this.timers.arm(delay_ms, () => {
      for (const text of texts) this.socket.receive(Buffer.from(text), false);
    });
  }

  later(delay_ms: number, fn: () => void): void {
    this.timers.arm(delay_ms, fn);
  }

  sendBinary(bytes: Buffer): void {
    this.timers.arm(0, () => this.socket.receive(bytes, true));
  }

  close(code = 1000, reason = ''): void {
    this.timers.arm(0, () => this.socket.closed(code, reason));
  }

  drop(): void {
    this.timers.arm(0, () => this.socket.closed(1006, ''));
  }
}
