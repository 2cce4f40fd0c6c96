import { StringDecoder } from 'node:string_decoder';

/**
 * Server-sent events from a byte stream, as they arrive: each `data` payload is handed to `onData`
 * when its event ends (a blank line). Lines may end in LF, CRLF or CR; an event may be split
 * anywhere across reads, a UTF-8 character included. Comment lines and the fields other than
 * `data` (`event`, `id`, `retry`) are read past: OpenAI-compatible streams carry everything in `data`.
 */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private data: string[] = [];
  /** The last read ended in CR: an LF that opens the next read belongs to that line end. */
  private afterCr = false;

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Buffer): void {
    let text = this.decoder.write(chunk);
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = false;
    if (text.length === 0) return;
    const all = this.pending.length > 0 ? this.pending + text : text;
    let start = 0;
    for (;;) {
      const lf = all.indexOf('\n', start);
      const cr = all.indexOf('\r', start);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      this.line(all.slice(start, end));
      if (all.charCodeAt(end) === 13 /* CR */) {
        if (end + 1 === all.length) this.afterCr = true;
        start = all.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
      } else {
        start = end + 1;
      }
    }
    this.pending = start < all.length ? all.slice(start) : '';
  }

  /** Bytes held back: the part of a line not yet ended. */
  get buffered(): number {
    return this.pending.length;
  }

  private line(line: string): void {
    if (line.length === 0) {
      if (this.data.length > 0) {
        const data = this.data.length === 1 ? this.data[0] : this.data.join('\n');
        this.data = [];
        this.onData(data);
      }
      return;
    }
    if (line.startsWith('data:')) this.data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
    else if (line === 'data') this.data.push('');
  }
}
