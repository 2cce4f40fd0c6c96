import { isUtf8 } from 'node:buffer';

/** What a `FrameReader` hands on: each whole data frame, each ping, and the bytes it leaves to ws. */
export interface FrameSink {
  /** One unfragmented data frame's payload (a view into the bytes read; text frames are valid UTF-8). */
  message(payload: Buffer, isBinary: boolean): void;
  /** A ping's payload: the caller answers it with a pong. */
  ping(payload: Buffer): void;
  /**
   * Everything from the first frame the reader does not take on: a close frame, a fragment, a frame
   * with a reserved bit or a mask, a frame over the payload bound, a text frame that is not UTF-8.
   * ws reads these bytes and every later one, and does what RFC 6455 asks of each.
   */
  handOff(rest: Buffer): void;
}

/**
 * Reads the server's frames (RFC 6455 5.2) from the socket's bytes on the session's hot path, in
 * place of ws's receiver (a Writable stream, a Buffer view per header and payload, two events per
 * message). It takes what a speech server sends all session long, whole unfragmented text and
 * binary frames, pings and pongs, and hands the rest over to ws at the first frame it does not
 * take: from then on ws reads the connection. Bytes of a frame not yet whole wait for the next read.
 */
export class FrameReader {
  private pending: Buffer | null = null;
  private handedOff = false;

  constructor(
    private readonly sink: FrameSink,
    /** The largest payload taken: a larger frame goes to ws, which refuses it before buffering it (`maxPayload`). */
    private readonly max_payload: number,
  ) {}

  /** Whether the reader gave the connection to ws. */
  get gaveUp(): boolean {
    return this.handedOff;
  }

  /** One read of the socket. */
  push(chunk: Buffer): void {
    if (this.handedOff) return;
    const buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    let at = 0;
    while (buf.length - at >= 2) {
      const b0 = buf[at];
      const b1 = buf[at + 1];
      const opcode = b0 & 0x0f;
      // FIN set, no reserved bit (no extension is negotiated), not masked (a server never masks).
      const plain = (b0 & 0xf0) === 0x80 && (b1 & 0x80) === 0;
      let len = b1 & 0x7f;
      let header = 2;
      if (len === 126) {
        if (buf.length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        header = 4;
      } else if (len === 127) {
        if (buf.length - at < 10) break;
        len = buf.readUInt32BE(at + 2) * 2 ** 32 + buf.readUInt32BE(at + 6);
        header = 10;
      }
      const data = opcode === 0x1 || opcode === 0x2;
      const control = opcode === 0x9 || opcode === 0xa;
      if (!plain || !(data || control) || len > this.max_payload || (control && len > 125)) return this.handOff(buf.subarray(at));
      if (buf.length - at < header + len) break;
      const payload = buf.subarray(at + header, at + header + len);
      if (opcode === 0x1 && !isUtf8(payload)) return this.handOff(buf.subarray(at));
      at += header + len;
      if (data) this.sink.message(payload, opcode === 0x2);
      else if (opcode === 0x9) this.sink.ping(payload);
      if (this.handedOff) return;
    }
    // Kept as its own copy: the read's buffer is not held for the bytes of one frame.
    if (at < buf.length) this.pending = Buffer.from(buf.subarray(at));
  }

  private handOff(rest: Buffer): void {
    this.handedOff = true;
    this.sink.handOff(rest);
  }
}
