import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { FromWorker, ReceiptBlock, ToWorker, WorkerOptions } from './messages';
import { ReceiptColumns } from './receipts-json';
import { startWorker } from './start-worker';

jest.setTimeout(30_000);

const LAYOUT = { sessions_dir: 'sessions', trace: 'trace.jsonl', receipts: 'input-send-receipts.json' };

type Batch = Extract<ToWorker, { kind: 'batch' }>;
type BatchDone = Extract<FromWorker, { kind: 'batch_done' }>;

/**
 * The writer thread, as the TraceWriter starts it, driven message by message. Every message it
 * posts is kept; a wait fails at once if the thread errors or exits instead.
 */
class WriterThread {
  readonly messages: FromWorker[] = [];
  readonly errors: Error[] = [];
  exitCode: number | null = null;
  /** Its exit status, once it has ended. */
  readonly ended: Promise<number>;
  private batchNo = 0;
  private wake: () => void = () => undefined;

  constructor(readonly worker: Worker) {
    this.ended = new Promise((resolve) => worker.once('exit', resolve));
    worker.on('message', (m: FromWorker) => {
      this.messages.push(m);
      this.wake();
    });
    worker.on('error', (err) => {
      this.errors.push(err);
      this.wake();
    });
    worker.on('exit', (code) => {
      this.exitCode = code;
      this.wake();
    });
  }

  static async start(root: string, options: Partial<WorkerOptions> = {}): Promise<WriterThread> {
    const data: WorkerOptions = { root, layout: LAYOUT, mode: 'full', delay_ms_per_batch: 0, nice: 10, ...options };
    const thread = new WriterThread(startWorker(join(__dirname, 'writer-worker.ts'), data));
    await thread.until((m) => m.kind === 'ready');
    return thread;
  }

  /** The first message that `match`es, once it has come. */
  async until<T extends FromWorker>(match: (m: FromWorker) => m is T): Promise<T>;
  async until(match: (m: FromWorker) => boolean): Promise<FromWorker>;
  async until(match: (m: FromWorker) => boolean): Promise<FromWorker> {
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.errors.length > 0 || this.exitCode !== null) throw new Error(`writer thread ended (exit ${this.exitCode}): ${this.errors.map((e) => e.message).join('; ')}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Posts one batch and waits for its batch_done. */
  async batch(parts: Partial<Omit<Batch, 'kind' | 'batch'>>): Promise<BatchDone> {
    const batch = ++this.batchNo;
    this.worker.postMessage({ kind: 'batch', batch, lines: [], parts: [], ends: [], records: [], ...parts } satisfies Batch);
    return this.until((m): m is BatchDone => m.kind === 'batch_done' && m.batch === batch);
  }

  /** Stops it and waits for it to end; its exit status. */
  async stop(): Promise<number> {
    this.worker.postMessage({ kind: 'stop' } satisfies ToWorker);
    return this.ended;
  }
}

const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text));
const traceLine = (direction: string, time_s: number, event: string) => `{"direction":"${direction}","time_s":${time_s.toFixed(6)},"event":${event}}\n`;

/** Receipts of seq `from` to `to` (inclusive), as a session hands them over, and as the file keeps them. */
function receipts(from: number, to: number): { block: ReceiptBlock; entries: Array<Record<string, unknown>> } {
  const columns = new ReceiptColumns();
  const entries: Array<Record<string, unknown>> = [];
  for (let seq = from; seq <= to; seq++) {
    const entry = { event_id: `s1_a${seq}`, seq, scheduled_s: 50 + seq * 0.08, start_s: 50 + seq * 0.08 + 1e-4, completed_s: 50 + seq * 0.08 + 3e-4 };
    columns.push(entry.event_id, entry.seq, entry.scheduled_s, entry.start_s, entry.completed_s);
    entries.push(entry);
  }
  return { block: columns.take(), entries };
}

/** Descriptors this process holds open on files under `dir` (Linux). */
function openUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return []; // the descriptor readdir itself used, closed since
    }
  });
}

/** This process's threads at nice `nice` (Linux: the 19th field of each task's stat). */
function threadsAtNice(nice: number): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === nice;
  }).length;
}

describe('writer-worker', () => {
  let root: string;
  let thread: WriterThread | undefined;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'writer-worker-'));
  });
  afterEach(async () => {
    if (thread && thread.exitCode === null) expect(await thread.stop()).toBe(0);
    thread = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('says ready once started; on stop it closes its run files, says stopped, and ends with status 0', async () => {
    const t = (thread = await WriterThread.start(root));
    await t.batch({ records: [{ file: 'sessions.jsonl', chunks: [bytes('{"id":"s1"}\n')] }] });
    expect(await t.stop()).toBe(0);
    expect(t.messages.map((m) => m.kind)).toEqual(['ready', 'batch_done', 'stopped']);
    expect(t.errors).toEqual([]);
    expect(await readFile(join(root, 'sessions.jsonl'), 'utf8')).toBe('{"id":"s1"}\n');
  });

  it("appends each session's lines to its own trace file, batch after batch, in order, and counts the bytes", async () => {
    const t = (thread = await WriterThread.start(root));
    const a = [traceLine('send', 0.08, '{"type":"input_audio_buffer.append","seq":0}'), traceLine('receive', 0.09, '{"type":"ack"}')];
    const b = [traceLine('send', 0.16, '{"type":"input_audio_buffer.append","seq":1}')];
    const c = [traceLine('error', 0.2, '{"message":"closed"}')];
    const first = await t.batch({ lines: [{ session: 's1', chunks: a.map(bytes), bytes: 0 }, { session: 's2', chunks: c.map(bytes), bytes: 0 }] });
    const second = await t.batch({ lines: [{ session: 's1', chunks: b.map(bytes), bytes: 0 }] });
    expect(await readFile(join(root, 'sessions', 's1', 'trace.jsonl'), 'utf8')).toBe([...a, ...b].join(''));
    expect(await readFile(join(root, 'sessions', 's2', 'trace.jsonl'), 'utf8')).toBe(c.join(''));
    expect(first).toMatchObject({ batch: 1, bytes: Buffer.byteLength([...a, ...c].join('')), closed: [] });
    expect(second).toMatchObject({ batch: 2, bytes: Buffer.byteLength(b.join('')), closed: [] });
    expect(first.write_ms).toBeGreaterThanOrEqual(0);
    expect(first).not.toHaveProperty('record_failure');
  });

  it('writes full traces byte for byte, audio included, after whatever a trace file already held', async () => {
    const t = (thread = await WriterThread.start(root));
    const earlier = traceLine('send', 0, '{"type":"session.update"}');
    await mkdir(join(root, 'sessions', 's1'), { recursive: true });
    await writeFile(join(root, 'sessions', 's1', 'trace.jsonl'), earlier);
    const append = traceLine('send', 0.08, `{"type":"input_audio_buffer.append","audio":"${Buffer.alloc(640, 9).toString('base64')}"}`);
    const done = await t.batch({ lines: [{ session: 's1', chunks: [bytes(append)], bytes: 0 }] });
    expect(await readFile(join(root, 'sessions', 's1', 'trace.jsonl'), 'utf8')).toBe(earlier + append);
    expect(done.bytes).toBe(Buffer.byteLength(append));
  });

  it("appends records to the run's own files in order, text and bytes alike", async () => {
    const t = (thread = await WriterThread.start(root));
    await mkdir(join(root, 'samples'));
    const done = await t.batch({
      records: [
        { file: 'requests.jsonl', chunks: [bytes('{"i":0}\n'), bytes('{"i":1}\n')] },
        { file: 'samples/samples.msgpack', chunks: [Uint8Array.of(0x92, 1, 2)] },
      ],
    });
    await t.batch({ records: [{ file: 'requests.jsonl', chunks: [bytes('{"i":2}\n')] }] });
    expect(await readFile(join(root, 'requests.jsonl'), 'utf8')).toBe('{"i":0}\n{"i":1}\n{"i":2}\n');
    expect([...(await readFile(join(root, 'samples', 'samples.msgpack')))]).toEqual([0x92, 1, 2]);
    expect(done.bytes).toBe(16 + 3);
  });

  it("writes a session's receipts whole at its end when none went before, after its last lines, and says it is closed", async () => {
    const t = (thread = await WriterThread.start(root));
    const { block, entries } = receipts(0, 4);
    const line = traceLine('send', 0.4, '{"type":"input_audio_buffer.commit"}');
    const done = await t.batch({ lines: [{ session: 's1', chunks: [bytes(line)], bytes: 0 }], ends: [{ session: 's1', receipts: block }] });
    expect(done.closed).toEqual([{ session: 's1' }]);
    expect(JSON.parse(await readFile(join(root, 'sessions', 's1', 'input-send-receipts.json'), 'utf8'))).toEqual({ appends: entries });
    expect(await readFile(join(root, 'sessions', 's1', 'trace.jsonl'), 'utf8')).toBe(line);
  });

  it("writes a long session's receipts a part at a time, head and parts as they come and the tail at its end, into one JSON file", async () => {
    const t = (thread = await WriterThread.start(root));
    const path = join(root, 'sessions', 's1', 'input-send-receipts.json');
    const [p1, p2, tail] = [receipts(0, 2), receipts(3, 4), receipts(5, 5)];
    const first = await t.batch({ parts: [{ session: 's1', receipts: p1.block }] });
    expect(first.closed).toEqual([]);
    const open = await readFile(path, 'utf8');
    expect(open.startsWith('{"appends":[{')).toBe(true);
    expect(() => JSON.parse(open)).toThrow();
    await t.batch({ parts: [{ session: 's1', receipts: p2.block }, { session: 's2', receipts: new ReceiptColumns().take() }] });
    const done = await t.batch({ ends: [{ session: 's1', receipts: tail.block }] });
    expect(done.closed).toEqual([{ session: 's1' }]);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ appends: [...p1.entries, ...p2.entries, ...tail.entries] });
    // An empty part writes nothing: s2 has no file until its end.
    await expect(readFile(join(root, 'sessions', 's2', 'input-send-receipts.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  (process.platform === 'linux' ? it : it.skip)("holds a session's files open while it streams and closes them at its end; run files until it stops", async () => {
    const t = (thread = await WriterThread.start(root));
    const dir = join(root, 'sessions', 's1');
    await t.batch({
      lines: [{ session: 's1', chunks: [bytes(traceLine('send', 0, '{}'))], bytes: 0 }],
      parts: [{ session: 's1', receipts: receipts(0, 0).block }],
      records: [{ file: 'sessions.jsonl', chunks: [bytes('{}\n')] }],
    });
    expect(openUnder(root).sort()).toEqual([join(dir, 'input-send-receipts.json'), join(dir, 'trace.jsonl'), join(root, 'sessions.jsonl')].sort());
    await t.batch({ ends: [{ session: 's1', receipts: receipts(1, 1).block }] });
    expect(openUnder(root)).toEqual([join(root, 'sessions.jsonl')]);
    // A later session of that name opens its trace again, and adds to it.
    await t.batch({ lines: [{ session: 's1', chunks: [bytes(traceLine('send', 1, '{}'))], bytes: 0 }] });
    expect(await readFile(join(dir, 'trace.jsonl'), 'utf8')).toBe(traceLine('send', 0, '{}') + traceLine('send', 1, '{}'));
    expect(await t.stop()).toBe(0);
    expect(openUnder(root)).toEqual([]);
  });

  it('closes the receipts of a session whose parts went before it with an empty tail', async () => {
    const t = (thread = await WriterThread.start(root));
    const part = receipts(0, 1);
    await t.batch({ parts: [{ session: 's1', receipts: part.block }] });
    await t.batch({ ends: [{ session: 's1', receipts: new ReceiptColumns().take() }] });
    expect(JSON.parse(await readFile(join(root, 'sessions', 's1', 'input-send-receipts.json'), 'utf8'))).toEqual({ appends: part.entries });
  });

  it('with --trace events, writes the audio in trace lines as its byte length (and counts what it wrote), leaving run records as they are', async () => {
    const t = (thread = await WriterThread.start(root, { mode: 'events' }));
    const audio = Buffer.alloc(2560, 3).toString('base64');
    const append = traceLine('send', 0.08, `{"type":"input_audio_buffer.append","audio":"${audio}"}`);
    const other = traceLine('receive', 0.09, '{"type":"response.created"}');
    const record = `{"audio":"${audio}"}\n`;
    const done = await t.batch({ lines: [{ session: 's1', chunks: [bytes(append + other)], bytes: 0 }], records: [{ file: 'records.jsonl', chunks: [bytes(record)] }] });
    const written = await readFile(join(root, 'sessions', 's1', 'trace.jsonl'), 'utf8');
    expect(written).toBe(traceLine('send', 0.08, '{"type":"input_audio_buffer.append","audio":2560}') + other);
    expect(await readFile(join(root, 'records.jsonl'), 'utf8')).toBe(record);
    expect(done.bytes).toBe(Buffer.byteLength(written) + Buffer.byteLength(record));
  });

  it('fails only the session a write failed for: its first failure, with path and errno, is said at its end, and its later writes are skipped', async () => {
    const t = (thread = await WriterThread.start(root));
    await mkdir(join(root, 'sessions'));
    // Where the session's directory should be, a file.
    await writeFile(join(root, 'sessions', 'blocked'), 'not a directory');
    const line = bytes(traceLine('send', 0, '{"type":"input_audio_buffer.append"}'));
    const first = await t.batch({ lines: [{ session: 'blocked', chunks: [line], bytes: 0 }, { session: 'ok', chunks: [line], bytes: 0 }] });
    expect(first.closed).toEqual([]);
    // The way is clear again, but the session has failed: nothing more of it is written.
    await rm(join(root, 'sessions', 'blocked'));
    await t.batch({ lines: [{ session: 'blocked', chunks: [line], bytes: 0 }], parts: [{ session: 'blocked', receipts: receipts(0, 0).block }] });
    const done = await t.batch({ ends: [{ session: 'blocked', receipts: receipts(1, 1).block }, { session: 'ok', receipts: receipts(0, 0).block }] });
    expect(done.closed).toEqual([
      { session: 'blocked', failure: { path: join(root, 'sessions', 'blocked'), errno: 'EEXIST', message: expect.stringContaining('EEXIST') } },
      { session: 'ok' },
    ]);
    await expect(readFile(join(root, 'sessions', 'blocked', 'trace.jsonl'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(join(root, 'sessions', 'blocked', 'input-send-receipts.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(join(root, 'sessions', 'ok', 'trace.jsonl'))).toEqual(Buffer.from(line));
    // The failure went with the session's end: a later session of that name is written.
    await t.batch({ lines: [{ session: 'blocked', chunks: [line], bytes: 0 }] });
    expect(await readFile(join(root, 'sessions', 'blocked', 'trace.jsonl'))).toEqual(Buffer.from(line));
  });

  it('says the first run file it could not append to, with path and errno, and still writes the others', async () => {
    const t = (thread = await WriterThread.start(root));
    const done = await t.batch({
      records: [
        { file: 'missing/a.jsonl', chunks: [bytes('{}\n')] },
        { file: 'also-missing/b.jsonl', chunks: [bytes('{}\n')] },
        { file: 'c.jsonl', chunks: [bytes('{"c":1}\n')] },
      ],
    });
    expect(done.record_failure).toEqual({ path: join(root, 'missing', 'a.jsonl'), errno: 'ENOENT', message: expect.stringContaining('ENOENT'), file: 'missing/a.jsonl' });
    expect(await readFile(join(root, 'c.jsonl'), 'utf8')).toBe('{"c":1}\n');
    expect(done.bytes).toBe(8);
  });

  it('holds each batch as a slow disk would when the test hook asks it to', async () => {
    const t = (thread = await WriterThread.start(root, { delay_ms_per_batch: 40 }));
    const done = await t.batch({ records: [{ file: 'a.jsonl', chunks: [bytes('{}\n')] }] });
    expect(done.write_ms).toBeGreaterThanOrEqual(40);
  });

  (process.platform === 'linux' ? it : it.skip)('runs at the nice value asked for, on its own thread only', async () => {
    const nice = 13;
    const before = threadsAtNice(nice);
    const t = (thread = await WriterThread.start(root, { nice }));
    expect(threadsAtNice(nice)).toBe(before + 1);
    expect(await t.stop()).toBe(0);
    expect(threadsAtNice(nice)).toBe(before);
  });

  it('fails loudly on a message it does not know: the thread errors, naming it, and ends non-zero', async () => {
    const t = (thread = await WriterThread.start(root));
    t.worker.postMessage({ kind: 'flush' });
    expect(await t.ended).not.toBe(0);
    expect(t.errors.map((e) => e.message)).toEqual(['writer-worker: unknown message {"kind":"flush"}']);
  });

  it('refuses to run outside a worker thread', async () => {
    await expect(import('./writer-worker')).rejects.toThrow('writer-worker must run as a worker thread');
  });
});
