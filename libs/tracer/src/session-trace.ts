import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the receipts file keeps of one append. */
export interface ReceiptTimes {
  event_id: string;
  seq: number;
  scheduled_s: number;
  start_s: number;
  completed_s: number;
}

/**
 * Where one session's records go. The session hands over what it sent and received and its send
 * receipts, never waits on a write, and is done only when `close()` resolves (everything on disk).
 */
export interface SessionTraceSink {
  sent(frame: string, time_s: number): void;
  received(text: string, time_s: number): void;
  receipt(r: ReceiptTimes): void;
  /** Resolves when all of this session's records are on disk; rejects with TraceWriteError. */
  close(): Promise<void>;
}

/** One per process: opens a sink per session under `<root>/sessions/<id>/`. */
export interface TraceWriter {
  openSession(session_id: string): SessionTraceSink;
}

/** A failed write, with the path and errno, which fails only the session it belonged to. */
export class TraceWriteError extends Error {
  override readonly name = 'TraceWriteError';
  readonly code = 'TRACE_WRITE_FAILED';
  constructor(
    readonly path: string,
    readonly errno: string | undefined,
    message: string,
  ) {
    super(`cannot write ${path}: ${errno ?? ''} ${message}`.replace('  ', ' '));
  }
}

/** Receipts of one session in columns, grown by doubling: no object per packet is retained. */
class ReceiptColumns {
  private size = 0;
  private ids: string[] = [];
  private seqs = new Int32Array(256);
  private times = new Float64Array(256 * 3);

  push(r: ReceiptTimes): void {
    if (this.size === this.seqs.length) this.grow();
    const i = this.size++;
    this.ids.push(r.event_id);
    this.seqs[i] = r.seq;
    this.times[3 * i] = r.scheduled_s;
    this.times[3 * i + 1] = r.start_s;
    this.times[3 * i + 2] = r.completed_s;
  }

  /** `{"appends":[…]}` as compact JSON. */
  toJson(): string {
    const parts: string[] = new Array(this.size);
    for (let i = 0; i < this.size; i++) {
      parts[i] =
        `{"event_id":${JSON.stringify(this.ids[i])},"seq":${this.seqs[i]},"scheduled_s":${this.times[3 * i]},` +
        `"start_s":${this.times[3 * i + 1]},"completed_s":${this.times[3 * i + 2]}}`;
    }
    return `{"appends":[${parts.join(',')}]}`;
  }

  private grow(): void {
    const seqs = new Int32Array(this.seqs.length * 2);
    seqs.set(this.seqs);
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.seqs = seqs;
    this.times = times;
  }
}

export const RECEIPTS_FILE = 'input-send-receipts.json';

/**
 * Keeps receipts only (`--trace off`): compact columns in memory, written with one async write
 * when the session closes. Sent and received frames are dropped.
 */
export class ReceiptsOnlyWriter implements TraceWriter {
  constructor(private readonly root: string) {}

  openSession(session_id: string): SessionTraceSink {
    const dir = join(this.root, 'sessions', session_id);
    const columns = new ReceiptColumns();
    return {
      sent: () => undefined,
      received: () => undefined,
      receipt: (r) => columns.push(r),
      close: async () => {
        const path = join(dir, RECEIPTS_FILE);
        try {
          await mkdir(dir, { recursive: true });
          await writeFile(path, columns.toJson());
        } catch (err) {
          const e = err as NodeJS.ErrnoException;
          throw new TraceWriteError(path, e.code, e.message);
        }
      },
    };
  }
}
