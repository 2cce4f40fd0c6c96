import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { FromWorker, RecordChunks, SessionEnd, SessionLines, ToWorker, TraceLayout, TraceMode, WorkerOptions } from './messages';
import { RECEIPTS_PART, ReceiptColumns } from './receipts-json';
import { startWorker } from './start-worker';
import { LineChunks } from './line-chunks';
import { nodeTimerHost, staggeredFirst, type TimerHost } from '@duplex-bench/pacer';

/** What the receipts file keeps of one append. */
export interface ReceiptTimes {
  event_id: string;
  seq: number;
  scheduled_s: number;
  start_s: number;
  completed_s: number;
}

/**
 * Where one session's records go. The session hands over what it sent and received and its
 * receipts, never waits on a write, and is done only when `close()` resolves: its files complete.
 * A session never waits for the writer (its cadence comes first): a writer that falls behind is
 * counted (`high_water_crossings`, `backlog_peak_bytes`) and said in the summary, not pushed back.
 */
/** What refused a session's admission: an HTTP status at the upgrade, or an error code at the opening. */
export interface AdmissionRefusal {
  http_status?: number;
  code?: string;
}

export interface SessionTraceSink {
  /** Whether frames sent and received are written (`--trace full` or `events`); receipts and errors always are. */
  readonly tracesFrames: boolean;
  sent(frame: string | Uint8Array, time_s: number): void;
  /** A received frame, as text or as the bytes that arrived (preferred: no re-encoding). */
  received(frame: string | Uint8Array, time_s: number): void;
  receipt(r: ReceiptTimes): void;
  /**
   * What ended the session on the client's side (`direction: "error"`). Written in every trace
   * mode, `off` included, so an incomplete session's cause is always on disk.
   */
  error(message: string, time_s: number): void;
  /**
   * A refused admission before the session existed (`direction: "admission"`), in every mode: an
   * upgrade refused with `http_status` (`connection_denied`, the line sglang-omni's client writes),
   * or an opening refused with an error `code` (`session_refused`, vLLM-Omni's `resource_exhausted`).
   */
  admission(attempt: number, refusal: AdmissionRefusal, time_s: number): void;
  /** Resolves when all of this session's records are on disk; rejects with TraceWriteError. */
  close(): Promise<void>;
}

/** A failed write, with the path and errno; it fails only the session it belonged to. */
export class TraceWriteError extends Error {
  override readonly name = 'TraceWriteError';
  readonly code = 'TRACE_WRITE_FAILED';
  constructor(
    readonly path: string,
    readonly errno: string | undefined,
    message: string,
  ) {
    super(`cannot write ${path}: ${message}`);
  }
}

export interface TraceWriterOptions {
  /** Run directory; files go to `<root>/<layout.sessions_dir>/<id>/`. */
  root: string;
  /** The names of a session's directory and files, from the run directory's owner (results `TRACE_LAYOUT`). */
  layout: TraceLayout;
  mode: TraceMode;
  /** A session's lines are handed over at most this often. */
  flush_interval_ms?: number;
  /** Session ends arriving within this window go to disk in one batch. */
  end_gather_ms?: number;
  /** Backlog (bytes handed over, not yet written) above which `sent`/`received` return false. */
  high_water_bytes?: number;
  /** Test hook: the worker waits this long per batch. */
  delay_ms_per_batch?: number;
  /** Bound on the worker's start. */
  start_timeout_ms?: number;
  /** Test hook: the module the writer thread runs (default: writer-worker beside this file). */
  worker_file?: string;
  /** Nice value of the writer thread on Linux (default 10). */
  nice?: number;
  /** The timers of the flush, the gathering of session ends and the start and stop bounds (default: real ones). */
  timers?: TimerHost;
}

export interface TraceWriterStats {
  batches: number;
  bytes_written: number;
  backlog_peak_bytes: number;
  max_batch_write_ms: number;
  /** Times the backlog rose past the high-water mark (the writer fell behind; a `drain` event follows each). */
  high_water_crossings: number;
}

/** Flush slots per interval: sessions are spread over them so no single hand-over is large. */
const FLUSH_SLOTS = 10;

interface OpenSession {
  id: string;
  slot: number;
  lines: LineChunks;
  receipts: ReceiptColumns;
  /** Receipts that go to the thread as the next part (`RECEIPTS_PART` after the first). */
  part: number;
  closing: boolean;
  resolve?: () => void;
  reject?: (err: Error) => void;
}

/**
 * The writer thread's young generation, MiB. Left to V8, its semi-spaces doubled step by step to
 * 16 MiB while its live heap stayed at 4-18 MiB: 12 → 42 MiB of heap over the first three minutes
 * of a churn run (20 arrivals/s), the steps of that run's RSS. At 4 MiB its heap stays at
 * 12-15 MiB (docs/performance.md, "Long runs in flat memory"); the batches' bytes are transferred
 * ArrayBuffers, outside this limit.
 */
const WRITER_LIMITS = { maxYoungGenerationSizeMb: 4 };

/**
 * One per process: a worker thread does every write, in batches. The event loop only formats
 * lines (a splice of the frame string) and posts them, each session at most every 0.5 s, with
 * session ends gathered 50 ms into one batch.
 */
export class TraceWriter extends EventEmitter {
  private readonly worker: Worker;
  private readonly sessions = new Map<string, OpenSession>();
  private readonly ends: SessionEnd[] = [];
  /** Receipts of sessions still streaming, a part each, not yet handed over. */
  private readonly parts: SessionEnd[] = [];
  private opened = 0;
  /** Records appended to run files and not yet handed over, by file, in order. */
  private readonly records = new Map<string, { chunks: Array<string | Uint8Array>; bytes: number }>();
  private recordTimer: (() => void) | null = null;
  private endTimer: (() => void) | null = null;
  private flushTimer: (() => void) | null = null;
  private readonly timers: TimerHost;
  private slotCursor = 0;
  private nextSlot = 0;
  private batch = 0;
  private backlog = 0;
  private readonly inFlight = new Map<number, number>();
  private dead: Error | null = null;
  /** The first run record that could not be appended; its file takes no more (`recordFailure`). */
  private lostRecord: TraceWriteError | null = null;
  private readonly lostFiles = new Set<string>();
  private readonly counters: TraceWriterStats = { batches: 0, bytes_written: 0, backlog_peak_bytes: 0, max_batch_write_ms: 0, high_water_crossings: 0 };
  private readonly ready: Promise<void>;
  private stopped: ((code: number) => void) | null = null;
  private readonly highWater: number;
  private backedUp = false;

  constructor(private readonly options: TraceWriterOptions) {
    super();
    this.highWater = options.high_water_bytes ?? 64 * 2 ** 20;
    const timers = (this.timers = options.timers ?? nodeTimerHost);
    const workerData: WorkerOptions = {
      root: options.root,
      layout: options.layout,
      mode: options.mode,
      delay_ms_per_batch: options.delay_ms_per_batch ?? 0,
      nice: options.nice ?? 10,
    };
    const file = options.worker_file ?? join(__dirname, `writer-worker${__filename.endsWith('.ts') ? '.ts' : '.js'}`);
    this.worker = startWorker(file, workerData, WRITER_LIMITS);
    this.ready = new Promise((resolve, reject) => {
      const cancel = timers.arm(options.start_timeout_ms ?? 15_000, () => reject(this.fault('did not start in time')));
      this.worker.once('message', () => {
        cancel();
        resolve();
      });
      // A worker that dies before its first message (its module missing, a throw at load) fails the start at once.
      this.worker.once('exit', (code) => {
        cancel();
        reject(this.fault(`exited with code ${code} before it started`));
      });
      this.worker.once('error', (err) => {
        cancel();
        reject(this.fault(`failed to start: ${err.message}`));
      });
    });
    this.ready.catch((err: Error) => this.die(err));
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (err) => this.die(this.fault(`failed: ${err.message}`)));
    this.worker.on('exit', (code) => {
      if (this.stopped) this.stopped(code);
      else this.die(this.fault(`exited with code ${code}`));
    });
    if (options.mode !== 'off') {
      const interval = (options.flush_interval_ms ?? 500) / FLUSH_SLOTS;
      const next = () => {
        this.flushTimer = timers.arm(interval, () => {
          this.flushSlot();
          next();
        }, { background: true });
      };
      next();
    }
  }

  /** A failure of the writer thread itself: it fails every session it held. */
  private fault(what: string): TraceWriteError {
    return new TraceWriteError(this.options.root, undefined, `the trace writer thread ${what}`);
  }

  /** Resolves once the worker runs; rejects if it cannot start. */
  started(): Promise<void> {
    return this.ready;
  }

  /** The error the worker died of, if it did. */
  /** Bytes handed to the writer thread and not yet written, now. */
  get backlogBytes(): number {
    return this.backlog;
  }

  get failure(): Error | null {
    return this.dead;
  }

  /** The first run record that could not be appended (its file is cut short), if one could not. */
  get recordFailure(): TraceWriteError | null {
    return this.lostRecord;
  }

  /** Whether an append to `file` failed: the file is cut short and took nothing after. */
  lost(file: string): boolean {
    return this.lostFiles.has(file);
  }

  stats(): TraceWriterStats {
    return { ...this.counters };
  }

  openSession(id: string): SessionTraceSink {
    const s: OpenSession = { id, slot: this.nextSlot++ % FLUSH_SLOTS, lines: new LineChunks(), receipts: new ReceiptColumns(), part: staggeredFirst(this.opened++, RECEIPTS_PART), closing: false };
    this.sessions.set(id, s);
    const tracing = this.options.mode !== 'off';
    return {
      tracesFrames: tracing,
      sent: (frame, time_s) => {
        if (tracing) s.lines.append('send', time_s, frame);
      },
      received: (frame, time_s) => {
        if (tracing) s.lines.append('receive', time_s, frame);
      },
      receipt: (r) => {
        s.receipts.push(r.event_id, r.seq, r.scheduled_s, r.start_s, r.completed_s);
        if (s.receipts.size >= s.part) this.handPart(s);
      },
      error: (message, time_s) => s.lines.append('error', time_s, JSON.stringify({ message })),
      admission: (attempt, refusal, time_s) =>
        s.lines.append(
          'admission',
          time_s,
          JSON.stringify(refusal.http_status !== undefined ? { type: 'connection_denied', http_status: refusal.http_status, attempt } : { type: 'session_refused', code: refusal.code, attempt }),
        ),
      close: () => this.closeSession(s),
    };
  }

  /**
   * Appends `bytes` to `file` (a path under the run directory) in the writer thread, after every
   * record appended to it before: a run's own records (`sessions.jsonl`, `requests.jsonl`, the
   * samples) go to disk as they end, and only counters and histograms stay in memory. Handed over
   * with the next batch, at most `flush_interval_ms` later; `close()` writes what is left. A failed
   * append (a full disk) is kept as `recordFailure`, naming the file, and that file takes nothing
   * more; the sessions' traces go on (each fails on its own when its files cannot be written). Text
   * (JSON lines) is joined into one buffer per hand-over.
   */
  append(file: string, bytes: string | Uint8Array): void {
    if (this.dead || bytes.length === 0 || this.lostFiles.has(file)) return;
    let r = this.records.get(file);
    if (!r) this.records.set(file, (r = { chunks: [], bytes: 0 }));
    r.chunks.push(bytes);
    r.bytes += bytes.length;
    this.recordTimer ??= this.timers.arm(this.options.flush_interval_ms ?? 500, () => {
      this.recordTimer = null;
      this.sendBatch([], []);
    });
  }

  private takeRecords(): { records: RecordChunks[]; bytes: number } {
    this.recordTimer?.();
    this.recordTimer = null;
    let bytes = 0;
    const records: RecordChunks[] = [];
    for (const [file, r] of this.records) {
      const chunks: Uint8Array[] = [];
      let text: string[] = [];
      const joinText = () => {
        if (text.length > 0) chunks.push(Buffer.from(text.join('')));
        text = [];
      };
      for (const c of r.chunks) {
        if (typeof c === 'string') text.push(c);
        else {
          joinText();
          chunks.push(c);
        }
      }
      joinText();
      records.push({ file, chunks });
      bytes += r.bytes;
    }
    this.records.clear();
    return { records, bytes };
  }

  private closing: Promise<void> | null = null;

  /**
   * Writes what is pending, then stops the worker. Bounded by `timeout_ms`; later calls share the
   * first. Rejects with a TraceWriteError when the writer could not finish: it did not stop in
   * time (it is then ended, and its last records may be missing) or it exited with a failure.
   */
  close(timeout_ms = 10_000): Promise<void> {
    this.closing ??= this.stop(timeout_ms);
    return this.closing;
  }

  private async stop(timeout_ms: number): Promise<void> {
    this.flushTimer?.();
    this.flushTimer = null;
    this.flushNow();
    // A writer that failed (a record it could not append) may still run: it is ended, never left.
    if (this.dead) {
      await this.worker.terminate();
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const cancel = this.timers.arm(timeout_ms, () => {
        void this.worker.terminate();
        reject(this.fault(`did not finish writing within ${timeout_ms} ms and was ended; its last records may be missing`));
      });
      this.stopped = (code) => {
        cancel();
        if (code === 0) resolve();
        else reject(this.fault(`exited with code ${code} while finishing its writes`));
      };
      this.post({ kind: 'stop' });
    });
  }

  /** Test hook: ends the worker as a crash would. */
  killWorker(): Promise<number> {
    return this.worker.terminate();
  }

  private closeSession(s: OpenSession): Promise<void> {
    if (this.dead) return Promise.reject(this.dead);
    if (s.closing) return Promise.reject(new Error(`session ${s.id} closed twice`));
    s.closing = true;
    return new Promise<void>((resolve, reject) => {
      s.resolve = resolve;
      s.reject = reject;
      this.ends.push({ session: s.id, receipts: s.receipts.take() });
      this.endTimer ??= this.timers.arm(this.options.end_gather_ms ?? 50, () => this.flushEnds());
    });
  }

  /** A part of a streaming session's receipts goes with the next hand-over, at most flush_interval_ms later. */
  private handPart(s: OpenSession): void {
    s.part = RECEIPTS_PART;
    if (this.dead) return;
    this.parts.push({ session: s.id, receipts: s.receipts.take() });
    this.recordTimer ??= this.timers.arm(this.options.flush_interval_ms ?? 500, () => {
      this.recordTimer = null;
      this.sendBatch([], []);
    });
  }

  private takeLines(s: OpenSession): SessionLines | null {
    const bytes = s.lines.bytes;
    if (bytes === 0) return null;
    return { session: s.id, chunks: s.lines.take(), bytes };
  }

  private flushSlot(): void {
    const slot = this.slotCursor++ % FLUSH_SLOTS;
    const lines: SessionLines[] = [];
    for (const s of this.sessions.values()) {
      if (s.slot !== slot || s.closing) continue;
      const l = this.takeLines(s);
      if (l) lines.push(l);
    }
    if (lines.length > 0) this.sendBatch(lines, []);
  }

  private flushEnds(): void {
    this.endTimer = null;
    const ends = this.ends.splice(0);
    const lines: SessionLines[] = [];
    for (const end of ends) {
      const s = this.sessions.get(end.session);
      const l = s && this.takeLines(s);
      if (l) lines.push(l);
    }
    this.sendBatch(lines, ends);
  }

  private flushNow(): void {
    this.endTimer?.();
    this.endTimer = null;
    const lines: SessionLines[] = [];
    for (const s of this.sessions.values()) {
      const l = this.takeLines(s);
      if (l) lines.push(l);
    }
    const ends = this.ends.splice(0);
    if (lines.length > 0 || ends.length > 0 || this.records.size > 0 || this.parts.length > 0) this.sendBatch(lines, ends);
  }

  private sendBatch(lines: SessionLines[], ends: SessionEnd[]): void {
    if (this.dead) return;
    const batch = ++this.batch;
    const { records, bytes: recordBytes } = this.takeRecords();
    // Every part taken so far goes before any end: a session's parts reach its file before its tail.
    const parts = this.parts.splice(0);
    let bytes = recordBytes;
    for (const l of lines) bytes += l.bytes;
    for (const e of [...parts, ...ends]) bytes += e.receipts.size * 120;
    this.inFlight.set(batch, bytes);
    this.backlog += bytes;
    if (this.backlog > this.counters.backlog_peak_bytes) this.counters.backlog_peak_bytes = this.backlog;
    if (this.backlog > this.highWater && !this.backedUp) {
      this.backedUp = true;
      this.counters.high_water_crossings++;
    }
    const transfer = [
      ...lines.flatMap((l) => l.chunks.map((c) => c.buffer)),
      ...[...parts, ...ends].flatMap((e) => [e.receipts.seq.buffer, e.receipts.times.buffer]),
    ] as ArrayBuffer[];
    // Record chunks are copied, not transferred: a caller's buffer may be a view of a larger one.
    this.post({ kind: 'batch', batch, lines, parts, ends, records }, transfer);
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private onMessage(m: FromWorker): void {
    switch (m.kind) {
      case 'ready':
      case 'stopped':
        break;
      case 'batch_done': {
        this.counters.batches++;
        this.counters.bytes_written += m.bytes;
        if (m.write_ms > this.counters.max_batch_write_ms) this.counters.max_batch_write_ms = m.write_ms;
        this.backlog -= this.inFlight.get(m.batch) ?? 0;
        this.inFlight.delete(m.batch);
        if (this.backedUp && this.backlog <= this.highWater / 2) {
          this.backedUp = false;
          this.emit('drain');
        }
        if (m.record_failure) {
          const f = m.record_failure;
          this.lostFiles.add(f.file);
          this.records.delete(f.file);
          this.lostRecord ??= new TraceWriteError(f.path, f.errno, f.message);
          this.emit('record_failed', this.lostRecord);
        }
        for (const { session, failure } of m.closed) {
          const s = this.sessions.get(session);
          if (!s) continue;
          this.sessions.delete(session);
          if (failure) s.reject?.(new TraceWriteError(failure.path, failure.errno, failure.message));
          else s.resolve?.();
        }
        break;
      }
      default: {
        const never: never = m;
        throw new Error(`trace writer: unknown message ${JSON.stringify(never)}`);
      }
    }
  }

  /** The worker is gone: every session still open fails with the reason. */
  private die(err: Error): void {
    if (this.dead) return;
    this.dead = err;
    this.flushTimer?.();
    this.flushTimer = null;
    this.endTimer?.();
    this.endTimer = null;
    this.recordTimer?.();
    this.recordTimer = null;
    this.records.clear();
    for (const s of this.sessions.values()) s.reject?.(err);
    this.sessions.clear();
    this.emit('failed', err);
  }
}
