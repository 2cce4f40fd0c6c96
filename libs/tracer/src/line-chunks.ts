import { isAscii } from 'node:buffer';

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const RETURN = 0x0d;

/**
 * Trace lines share the shape of the sglang-omni client's traces, `{direction, time_s, event}` with
 * time_s on the monotonic clock, so tools written for its traces read ours.
 *
 * One session's trace lines as bytes in 64 KiB chunks, handed to the writer thread by transfer
 * (no copy). Lines become bytes at once, so no large string outlives a young-generation GC; a
 * prototype that kept lines as strings for 0.5 s collapsed at 512 sessions with full traces.
 */
export class LineChunks {
  private done: Uint8Array[] = [];
  private current: Buffer | null = null;
  private used = 0;
  bytes = 0;

  /** Appends `{"direction":…,"time_s":…,"event":<frame>}\n`; the frame as it arrived unless it must be re-encoded. */
  append(direction: string, time_s: number, frame: string | Uint8Array): void {
    const head = `{"direction":"${direction}","time_s":${time_s.toFixed(6)},"event":`;
    if (typeof frame === 'string') {
      // A UTF-8 length above the string length means a non-ASCII character.
      if (Buffer.byteLength(frame, 'utf8') !== frame.length) {
        this.appendRaw(head, reencode(frame));
        return;
      }
      const at = this.reserve(head.length + frame.length + 2);
      const buf = this.current as Buffer;
      buf.write(head, at, 'latin1');
      const body = at + head.length;
      buf.write(frame, body, 'latin1');
      if (hasLineBreak(buf.subarray(body, body + frame.length))) this.rewrite(at, head, reencode(frame));
      else this.finish(body + frame.length);
    } else {
      if (!cleanAscii(frame)) {
        this.appendRaw(head, reencode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8')));
        return;
      }
      const at = this.reserve(head.length + frame.length + 2);
      const buf = this.current as Buffer;
      buf.write(head, at, 'latin1');
      buf.set(frame, at + head.length);
      this.finish(at + head.length + frame.length);
    }
  }

  /** Every full chunk and the filled part of the current one; the session starts a new chunk. */
  take(): Uint8Array[] {
    if (this.current && this.used > 0) this.done.push(this.current.subarray(0, this.used));
    this.current = null;
    this.used = 0;
    const out = this.done;
    this.done = [];
    this.bytes = 0;
    return out;
  }

  private appendRaw(head: string, event: string): void {
    const at = this.reserve(head.length + event.length + 2);
    const buf = this.current as Buffer;
    buf.write(head, at, 'latin1');
    buf.write(event, at + head.length, 'latin1');
    this.finish(at + head.length + event.length);
  }

  private rewrite(at: number, head: string, event: string): void {
    this.used = at;
    this.appendRaw(head, event);
  }

  private finish(end: number): void {
    const buf = this.current as Buffer;
    buf[end] = 0x7d; // }
    buf[end + 1] = NEWLINE;
    this.bytes += end + 2 - this.used;
    this.used = end + 2;
  }

  /** Room for `n` bytes in the current chunk, starting a new one (as large as needed) if it is full. */
  private reserve(n: number): number {
    if (!this.current || this.used + n > this.current.length) {
      if (this.current && this.used > 0) this.done.push(this.current.subarray(0, this.used));
      this.current = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, n));
      this.used = 0;
    }
    return this.used;
  }
}

function hasLineBreak(view: Uint8Array): boolean {
  return view.indexOf(NEWLINE) >= 0 || view.indexOf(RETURN) >= 0;
}

function cleanAscii(view: Uint8Array): boolean {
  return isAscii(view) && !hasLineBreak(view);
}

/** One line of pure ASCII: line breaks and non-ASCII become JSON escapes; a non-JSON frame becomes a string. */
function reencode(frame: string): string {
  let event: string;
  try {
    event = JSON.stringify(JSON.parse(frame));
  } catch {
    event = JSON.stringify(frame);
  }
  return event.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
