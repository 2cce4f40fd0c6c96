import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import type { PlayedSpan } from './playout';
import { VOICE_ACTIVITY_DEFAULTS, type VoiceActivitySettings } from './voice-activity';
import type { FromVoiceWorker, ToVoiceWorker, VoiceWorkerOptions } from './voice-messages';

/** Received chunks wait at most this long before they go to the thread, ms. */
const FLUSH_MS = 50;
/** Or until this many bytes wait. */
const FLUSH_BYTES = 1 << 20;
/** A batch's first buffer; a full one is replaced by one twice as large, and the next batch starts at the size the last one used. */
const BATCH_START_BYTES = 1 << 16;
/** A thread that does not say it is ready, or does not answer a session's end, within this fails, ms. */
const ANSWER_MS = 30_000;

/** One session's model audio, sent to the voice activity thread; its speech spans when it ends. */
export interface VoiceSession {
  /** A received chunk, PCM16 LE mono at `sample_rate` as base64 text bytes (decoded in the thread), received at `received_s`. */
  add(received_s: number, base64: Uint8Array, sample_rate: number): void;
  /** A received chunk of digital silence (isZeroBase64), `bytes` of PCM16 LE: sent as its length only, not copied or decoded. */
  silence(received_s: number, bytes: number, sample_rate: number): void;
  /** The session's model speech spans on the playout clock, seconds; rejects when the VAD could not run. */
  end(): Promise<PlayedSpan[]>;
}

/**
 * The VAD of every conversation session in a thread of its own (libs/audio/src/voice-worker.ts):
 * the event loop only copies each received chunk's base64 into a batch and posts the batch every
 * 50 ms; the thread decodes it and runs at a lower priority than the loop (Linux), as the trace writer does.
 */
export class VoiceThread {
  private readonly worker: Worker;
  /** The batch's base64 bytes, back to back: a buffer of its own, handed over (transferred) whole. */
  private batch: Buffer = Buffer.allocUnsafeSlow(BATCH_START_BYTES);
  private bytes = 0;
  private lengths: number[] = [];
  private silent: number[] = [];
  private sessions: string[] = [];
  private received: number[] = [];
  private rates: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly waiting = new Map<string, { resolve: (s: PlayedSpan[]) => void; reject: (e: Error) => void }>();
  private readonly ready: Promise<void>;

  private constructor(
    readonly settings: Readonly<VoiceActivitySettings>,
    worker_file?: string,
  ) {
    const file = worker_file ?? join(__dirname, `voice-worker${__filename.endsWith('.ts') ? '.ts' : '.js'}`);
    const workerData: VoiceWorkerOptions = { settings: { ...settings }, nice: 10 };
    // A `.ts` worker (the sources under tsx or jest) needs tsx's CommonJS hook passed explicitly.
    this.worker = new Worker(file, { workerData, execArgv: file.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [] });
    this.worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      const bound = setTimeout(() => reject(new Error(`the voice activity thread did not start within ${ANSWER_MS} ms`)), ANSWER_MS);
      this.worker.once('error', (err) => {
        clearTimeout(bound);
        reject(err);
      });
      this.worker.on('message', (m: FromVoiceWorker) => {
        if (m.kind === 'ready') {
          clearTimeout(bound);
          resolve();
        } else if (m.kind === 'spans') this.onSpans(m.session, m.spans, m.error);
      });
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', (code) => this.failAll(new Error(`the voice activity thread exited (${code})`)));
  }

  /** Starts the thread; resolves once it is ready. */
  static async start(settings: Readonly<VoiceActivitySettings> = VOICE_ACTIVITY_DEFAULTS, worker_file?: string): Promise<VoiceThread> {
    const t = new VoiceThread(settings, worker_file);
    await t.ready;
    return t;
  }

  session(id: string): VoiceSession {
    return {
      add: (received_s, pcm, sample_rate) => this.add(id, received_s, pcm, sample_rate),
      silence: (received_s, bytes, sample_rate) => {
        if (bytes > 0) this.queue(id, received_s, sample_rate, 0, bytes);
      },
      end: () => this.end(id),
    };
  }

  /** Stops the thread once every session's spans went back. */
  async close(): Promise<void> {
    this.flush();
    await this.worker.terminate();
  }

  private add(session: string, received_s: number, pcm: Uint8Array, sample_rate: number): void {
    if (pcm.length === 0) return;
    if (this.bytes + pcm.length > this.batch.length) {
      const larger = Buffer.allocUnsafeSlow(Math.max(2 * this.batch.length, this.bytes + pcm.length));
      this.batch.copy(larger, 0, 0, this.bytes);
      this.batch = larger;
    }
    this.batch.set(pcm, this.bytes);
    this.bytes += pcm.length;
    this.queue(session, received_s, sample_rate, pcm.length, 0);
  }

  private queue(session: string, received_s: number, sample_rate: number, length: number, silent_bytes: number): void {
    this.lengths.push(length);
    this.silent.push(silent_bytes);
    this.sessions.push(session);
    this.received.push(received_s);
    this.rates.push(sample_rate);
    if (this.bytes >= FLUSH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.sessions.length === 0) return;
    // allocUnsafeSlow: the batch owns its ArrayBuffer (no pool), so it can be transferred as it is.
    const bytes = this.batch.buffer as ArrayBuffer;
    const message: ToVoiceWorker = {
      kind: 'chunks',
      bytes,
      sessions: this.sessions,
      received_s: Float64Array.from(this.received),
      rates: Int32Array.from(this.rates),
      lengths: Int32Array.from(this.lengths),
      silent_bytes: Int32Array.from(this.silent),
    };
    const moved = [message.received_s, message.rates, message.lengths, message.silent_bytes].map((a) => a.buffer as ArrayBuffer);
    this.worker.postMessage(message, [bytes, ...moved]);
    // The next batch's buffer holds what this one did: a burst that grew it is not allocated every 50 ms after.
    this.batch = Buffer.allocUnsafeSlow(Math.max(BATCH_START_BYTES, this.bytes));
    this.bytes = 0;
    this.lengths = [];
    this.silent = [];
    this.sessions = [];
    this.received = [];
    this.rates = [];
  }

  private end(session: string): Promise<PlayedSpan[]> {
    this.flush();
    return new Promise<PlayedSpan[]>((resolve, reject) => {
      const bound = setTimeout(() => {
        this.waiting.delete(session);
        reject(new Error(`the voice activity thread gave no spans for ${session} within ${ANSWER_MS} ms`));
      }, ANSWER_MS);
      this.waiting.set(session, {
        resolve: (s) => {
          clearTimeout(bound);
          resolve(s);
        },
        reject: (e) => {
          clearTimeout(bound);
          reject(e);
        },
      });
      this.worker.postMessage({ kind: 'end', session } satisfies ToVoiceWorker);
    });
  }

  private onSpans(session: string, spans: PlayedSpan[], error?: string): void {
    const w = this.waiting.get(session);
    this.waiting.delete(session);
    if (!w) return;
    if (error) w.reject(new Error(`voice activity of ${session}: ${error}`));
    else w.resolve(spans);
  }

  private failAll(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}
