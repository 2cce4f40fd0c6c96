import { connect, type NetConnectOpts, type Socket } from 'node:net';
import { FULL_READ_BYTES } from './read-burst';

/**
 * A plain (ws:) socket that reads into one buffer of its own, allocated once (Node's `onread`), in
 * place of a new buffer for every read. At 512 sessions those buffers were about 35 MB a second,
 * and V8 counts each against the room under its old generation's limit until a collection frees
 * it: once the limit was set from a 30 MB heap, the process marked its old generation 3 times a
 * second (docs/performance.md, issue 49's seventh round).
 *
 * Until the connection takes the reads (`take`, from the open on), each read's bytes are copied
 * and pushed into the socket's stream, where the HTTP upgrade and ws read them as ever. Once taken,
 * each read goes to the taker as a view of the buffer, which the next read of this socket writes
 * over: the taker must be done with those bytes, or copy them, before the loop turns. Node's own
 * `socket.pause()` and `resume()` stop and restart the handle of such a socket: a paused socket's
 * bytes wait in the kernel.
 */
export class DirectReads {
  /** As large as the buffer Node reads into otherwise: a read that fills it is a full read (`FULL_READ_BYTES`). */
  readonly buffer = Buffer.allocUnsafe(FULL_READ_BYTES);
  private taker: ((bytes: Buffer) => void) | null = null;

  constructor(private readonly socket: () => Socket) {}

  /** Node's `onread` callback: `false` stops the handle reading (before the take, the stream is full). */
  readonly onread = (nread: number, buf: Buffer): boolean => {
    if (this.taker === null) return this.socket().push(Buffer.from(buf.subarray(0, nread)));
    this.taker(buf.subarray(0, nread));
    return true;
  };

  /** From now on each read goes to `taker`, as a view of the buffer. */
  take(taker: (bytes: Buffer) => void): void {
    this.taker = taker;
  }

  /** Each read goes back to the socket's stream, copied (ws reads the connection from now on). */
  giveBack(): void {
    this.taker = null;
  }
}

const DIRECT = new WeakMap<Socket, DirectReads>();

/** The socket's own reads when it was made by `connectDirect`; null otherwise (a TLS socket, a test's). */
export function directReadsOf(socket: unknown): DirectReads | null {
  if (typeof socket !== 'object' || socket === null) return null;
  return DIRECT.get(socket as Socket) ?? null;
}

/**
 * Set in the environment (the e2e suites set it), each read lands in a new buffer and the bytes of
 * the socket's read before are overwritten with `~` as it lands: a consumer that reads a frame's
 * bytes after the next read of its socket then fails on them (a malformed frame), where with one
 * buffer it would read another frame's bytes now and then.
 */
export const CHECK_READS_ENV = 'DUPLEX_BENCH_CHECK_READS';

/** `onread` for a socket under CHECK_READS_ENV: a buffer per read, the last one's bytes overwritten when the next lands. */
function checkedOnread(reads: DirectReads): { buffer: () => Buffer; callback: (nread: number, buf: Buffer) => boolean } {
  let last: Buffer | null = null;
  return {
    buffer: () => Buffer.allocUnsafe(FULL_READ_BYTES),
    callback: (nread, buf) => {
      if (last !== null && last !== buf) last.fill(0x7e);
      last = buf;
      return reads.onread(nread, buf);
    },
  };
}

/** ws's `createConnection` for a ws: URL: `net.connect` as ws calls it, reading into a buffer of the socket's own. */
export function connectDirect(options: NetConnectOpts & { socketPath?: string }): Socket {
  let socket: Socket | null = null;
  const reads = new DirectReads(() => socket as Socket);
  const onread = process.env[CHECK_READS_ENV] ? checkedOnread(reads) : { buffer: reads.buffer, callback: reads.onread };
  // ws's own `netConnect` sets `path` to the socket path: its `path` is the request's URL path.
  socket = connect({ ...options, path: options.socketPath, onread } as NetConnectOpts);
  DIRECT.set(socket, reads);
  return socket;
}
