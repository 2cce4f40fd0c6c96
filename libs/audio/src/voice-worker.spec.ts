import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { conversation } from './signals.spec-helpers';
import { VOICE_ACTIVITY_DEFAULTS, voiceActivitySettings, type VoiceActivitySettings } from './voice-activity';
import type { FromVoiceWorker, ToVoiceWorker, VoiceWorkerOptions } from './voice-messages';

jest.setTimeout(30_000);

/** How long a test waits for one answer of the worker, ms: a bound, never a sleep. */
const ANSWER_MS = 10_000;

const RATE = 16000;
/** 80 ms chunks of PCM16 at RATE. */
const CHUNK = Math.round(RATE * 0.08) * 2;

/** A chunk as VoiceThread batches it: its PCM sent as base64, or digital silence sent as its length only. */
type Chunk = { session: string; received_s: number; pcm: Buffer } | { session: string; received_s: number; silent_bytes: number };

/** The worker, started as VoiceThread starts it, with every message it posts kept in order. */
class Harness {
  readonly worker: Worker;
  readonly messages: FromVoiceWorker[] = [];
  private readonly waiters: Array<() => void> = [];
  exit: number | null = null;

  constructor(settings: VoiceActivitySettings = { ...VOICE_ACTIVITY_DEFAULTS }) {
    const workerData: VoiceWorkerOptions = { settings, nice: 10 };
    this.worker = new Worker(join(__dirname, 'voice-worker.ts'), { workerData, execArgv: ['--require', 'tsx/cjs'] });
    // Ended by each test; unref'd so that no failure can hold jest open.
    this.worker.unref();
    this.worker.on('message', (m: FromVoiceWorker) => {
      this.messages.push(m);
      for (const w of this.waiters.splice(0)) w();
    });
    this.worker.on('exit', (code) => {
      this.exit = code;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** The first message (from the `from`-th on) that `pick` takes; fails after ANSWER_MS without one, so a test that fails still ends its worker. */
  async next<T extends FromVoiceWorker>(pick: (m: FromVoiceWorker) => m is T, from = 0): Promise<T> {
    const deadline = Date.now() + ANSWER_MS;
    for (;;) {
      const found = this.messages.slice(from).find(pick);
      if (found) return found;
      if (this.exit !== null) throw new Error(`the voice worker exited (${this.exit})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no such message from the voice worker within ${ANSWER_MS} ms`);
      let bound: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        bound = setTimeout(resolve, left);
      });
      clearTimeout(bound);
    }
  }

  spansOf(session: string): Promise<Extract<FromVoiceWorker, { kind: 'spans' }>> {
    return this.next((m): m is Extract<FromVoiceWorker, { kind: 'spans' }> => m.kind === 'spans' && m.session === session);
  }

  /** One batch, its base64 back to back in one transferred buffer, as VoiceThread posts it. */
  send(chunks: Chunk[]): void {
    const text = chunks.map((c) => ('pcm' in c ? Buffer.from(c.pcm.toString('base64'), 'latin1') : Buffer.alloc(0)));
    const bytes = new Uint8Array(Buffer.concat(text)).buffer as ArrayBuffer;
    const message: ToVoiceWorker = {
      kind: 'chunks',
      bytes,
      sessions: chunks.map((c) => c.session),
      received_s: Float64Array.from(chunks.map((c) => c.received_s)),
      rates: Int32Array.from(chunks.map(() => RATE)),
      lengths: Int32Array.from(text.map((t) => t.length)),
      silent_bytes: Int32Array.from(chunks.map((c) => ('pcm' in c ? 0 : c.silent_bytes))),
    };
    this.worker.postMessage(message, [bytes]);
  }

  post(message: ToVoiceWorker): void {
    this.worker.postMessage(message);
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

const ready = (m: FromVoiceWorker): m is { kind: 'ready' } => m.kind === 'ready';
const stopped = (m: FromVoiceWorker): m is { kind: 'stopped' } => m.kind === 'stopped';

/** `pcm` cut into 80 ms chunks of `session`, each received as it is due from `from_s`. */
function chunksOf(session: string, pcm: Buffer, from_s: number): Chunk[] {
  const out: Chunk[] = [];
  for (let i = 0; i * CHUNK < pcm.length; i++) out.push({ session, received_s: from_s + i * 0.08, pcm: pcm.subarray(i * CHUNK, Math.min(pcm.length, (i + 1) * CHUNK)) });
  return out;
}

describe('the voice activity worker', () => {
  // One worker for the cases with the default settings, each with sessions of its own.
  let w: Harness;
  beforeAll(() => {
    w = new Harness();
  });
  afterAll(async () => {
    await w.close();
  });

  it('says it is ready, and answers the end of a session it never heard with no spans', async () => {
    await w.next(ready);
    expect(w.messages[0]).toEqual({ kind: 'ready' });
    w.post({ kind: 'end', session: 'nobody' });
    expect(await w.spansOf('nobody')).toEqual({ kind: 'spans', session: 'nobody', spans: [] });
  });

  it('finds each session’s speech on its own playout clock, from one batch where sessions and silences interleave', async () => {
    await w.next(ready);
    const { pcm, bounds } = await conversation(RATE, [300, 'q1', 600]);
    // a: every chunk at once at 10 s (a burst), so each plays after the one before.
    const a = chunksOf('a', pcm, 10).map((c) => ({ ...c, received_s: 10 }));
    // b: each chunk as it is due from 50 s, and after its first chunk 1 s of nothing (an underrun).
    const b = chunksOf('b', pcm, 50).map((c, i) => (i === 0 ? c : { ...c, received_s: c.received_s + 1 }));
    const batch: Chunk[] = [];
    a.forEach((c, i) => batch.push(c, b[i], { session: 'quiet', received_s: 10 + i * 0.08, silent_bytes: CHUNK }));
    w.send(batch);
    for (const s of ['a', 'b', 'quiet']) w.post({ kind: 'end', session: s });
    const [sa, sb, quiet] = await Promise.all(['a', 'b', 'quiet'].map((s) => w.spansOf(s)));
    expect(sa.spans).toHaveLength(1);
    expect(Math.abs(sa.spans[0].start_s - (10 + bounds[0].start_ms / 1000))).toBeLessThan(0.1);
    expect(Math.abs(sa.spans[0].end_s - (10 + bounds[0].end_ms / 1000))).toBeLessThan(0.1);
    expect(sb.spans).toHaveLength(1);
    expect(sb.spans[0].start_s - sa.spans[0].start_s).toBeCloseTo(41, 1);
    expect(sb.spans[0].end_s - sa.spans[0].end_s).toBeCloseTo(41, 1);
    // Digital silence, sent as lengths only, is no speech; nor is it any error.
    expect(quiet).toEqual({ kind: 'spans', session: 'quiet', spans: [] });
  });

  it('keeps speech after a long arrival gap where it played: a new segment from its receipt', async () => {
    await w.next(ready);
    // q3a ends in 332 ms of silence and q3b begins with 13 ms: 445 ms of silence between their sounds.
    const { pcm, bounds } = await conversation(RATE, [200, 'q3a', 100, 'q3b', 400]);
    // Nothing arrives for 3 s before the chunk that holds q3b's first sound.
    const gapAt_s = Math.floor(bounds[1].start_ms / 80) * 0.08;
    w.send(chunksOf('s', pcm, 0).map((c) => (c.received_s >= gapAt_s ? { ...c, received_s: c.received_s + 3 } : c)));
    w.post({ kind: 'end', session: 's' });
    const { spans, error } = await w.spansOf('s');
    expect(error).toBeUndefined();
    expect(spans).toHaveLength(2);
    expect(Math.abs(spans[0].end_s - bounds[0].end_ms / 1000)).toBeLessThan(0.1);
    expect(Math.abs(spans[1].start_s - (3 + bounds[1].start_ms / 1000))).toBeLessThan(0.1);
    expect(Math.abs(spans[1].end_s - (3 + bounds[1].end_ms / 1000))).toBeLessThan(0.1);
  });

  it('on stop, answers every open session, then says it stopped', async () => {
    await w.next(ready);
    const { pcm } = await conversation(RATE, [200, 'mhm', 400]);
    const from = w.messages.length;
    w.send([...chunksOf('x', pcm, 0), ...chunksOf('y', pcm, 5)]);
    w.post({ kind: 'stop' });
    await w.next(stopped, from);
    const order = w.messages.slice(from).map((m) => (m.kind === 'spans' ? m.session : m.kind));
    // Each session's spans as its own detector finishes, both before the thread says it stopped.
    expect(order.slice(0, 2).sort()).toEqual(['x', 'y']);
    expect(order.slice(2)).toEqual(['stopped']);
    expect((await w.spansOf('y')).spans[0].start_s - (await w.spansOf('x')).spans[0].start_s).toBeCloseTo(5, 1);
  });
});

describe('the voice activity worker, when it cannot run the VAD', () => {
  it('answers with the reason, and keeps answering', async () => {
    const w = new Harness({ ...voiceActivitySettings(), mode: 7 as VoiceActivitySettings['mode'] });
    try {
      await w.next(ready);
      const { pcm } = await conversation(RATE, [100, 'mhm', 100]);
      w.send(chunksOf('s', pcm, 0));
      w.post({ kind: 'end', session: 's' });
      expect(await w.spansOf('s')).toEqual({ kind: 'spans', session: 's', spans: [], error: 'voice activity settings: mode 7 is not 0-3' });
      w.post({ kind: 'end', session: 'next' });
      expect(await w.spansOf('next')).toEqual({ kind: 'spans', session: 'next', spans: [] });
      expect(w.exit).toBeNull();
    } finally {
      await w.close();
    }
  });
});

describe('the voice activity worker module', () => {
  it('refuses to run outside a worker thread', () => {
    expect(() => jest.isolateModules(() => require('./voice-worker'))).toThrow('voice-worker must run as a worker thread');
  });
});
