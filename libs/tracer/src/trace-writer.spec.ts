import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import { TraceWriteError, TraceWriter, type ReceiptTimes } from './trace-writer';

/** The run directory's layout, as results names it. */
const LAYOUT = { sessions_dir: 'sessions', trace: 'trace.jsonl', receipts: 'input-send-receipts.json' };

const BOUND_MS = 10_000;

const receipt = (seq: number): ReceiptTimes => ({
  event_id: `s1_append_${seq}`,
  seq,
  scheduled_s: 1000 + seq * 0.08,
  start_s: 1000 + seq * 0.08 + 0.000125,
  completed_s: 1000 + seq * 0.08 + 0.00025 + seq * 1e-9,
});

describe('TraceWriter, receipts only (--trace off)', () => {
  let root: string;
  let writer: TraceWriter | undefined;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'duplex-bench-tracer-'));
  });

  afterEach(async () => {
    await writer?.close(2000);
    writer = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('writes sessions/<id>/input-send-receipts.json as compact JSON with every receipt, past 256 of them', async () => {
    writer = new TraceWriter({ layout: LAYOUT, root, mode: 'off', start_timeout_ms: BOUND_MS });
    await writer.started();
    const sink = writer.openSession('s1');
    const receipts = Array.from({ length: 1000 }, (_, seq) => receipt(seq));
    for (const r of receipts) {
      sink.sent(`{"type":"input_audio_buffer.append","event_id":"${r.event_id}"}`, r.start_s);
      sink.receipt(r);
      sink.received('{"type":"sglang.input_audio.accepted"}', r.completed_s);
    }
    await sink.close();

    const text = await readFile(join(root, 'sessions', 's1', 'input-send-receipts.json'), 'utf8');
    expect(text).not.toMatch(/\s/);
    const file = JSON.parse(text) as { appends: ReceiptTimes[] };
    expect(Object.keys(file)).toEqual(['appends']);
    // Times survive exactly: the file is what the pacing check is redone from.
    expect(file.appends).toEqual(receipts);
    expect(Object.keys(file.appends[0])).toEqual(['event_id', 'seq', 'scheduled_s', 'start_s', 'completed_s']);
    // Receipts only: no trace file.
    await expect(readFile(join(root, 'sessions', 's1', 'trace.jsonl'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("hands a long session's receipts over a part at a time as it streams, and its file reads whole at its end", async () => {
    const timers = new ManualTimers();
    const w = new TraceWriter({ layout: LAYOUT, root, mode: 'off', start_timeout_ms: BOUND_MS, flush_interval_ms: 500, timers });
    writer = w;
    await w.started();
    const sink = w.openSession('s1');
    const receipts = Array.from({ length: 3000 }, (_, seq) => receipt(seq));
    const file = join(root, 'sessions', 's1', 'input-send-receipts.json');
    // The first session's first part is 512 receipts: none goes over before them.
    receipts.slice(0, 511).forEach((r) => sink.receipt(r));
    expect(timers.pending).toEqual([]);
    sink.receipt(receipts[511]);
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([500]);
    timers.fire();
    // The next parts are 1,024 each; the file so far is the head and the parts' entries, not closed.
    receipts.slice(512).forEach((r) => sink.receipt(r));
    timers.fire();
    const closed = sink.close();
    timers.fire();
    await closed;
    expect(w.stats().batches).toBe(3);
    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(/\s/);
    expect((JSON.parse(text) as { appends: ReceiptTimes[] }).appends).toEqual(receipts);
  });

  it('gathers session ends within end_gather_ms into one batch, timed by its injected timers', async () => {
    const timers = new ManualTimers();
    const w = new TraceWriter({ layout: LAYOUT, root, mode: 'off', start_timeout_ms: BOUND_MS, end_gather_ms: 50, timers });
    writer = w;
    // The start bound is armed on the injected timers, and cancelled once the worker is up.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([BOUND_MS]);
    await w.started();
    expect(timers.pending).toEqual([]);
    const [a, b, c] = ['s1', 's2', 's3'].map((id) => w.openSession(id));
    a.receipt(receipt(0));
    b.receipt(receipt(0));
    const closed = [a.close(), b.close()];
    // Two ends, one gathering window: nothing goes to the worker before it ends.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([50]);
    expect(w.stats().batches).toBe(0);
    timers.fire();
    await Promise.all(closed);
    expect(w.stats().batches).toBe(1);
    // A later end opens a window of its own.
    const third = c.close();
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([50]);
    timers.fire();
    await third;
    expect(w.stats().batches).toBe(2);
  });

  it('appends run records to their files in order, at the latest one flush interval after each, and what is left at close', async () => {
    const timers = new ManualTimers();
    const w = new TraceWriter({ layout: LAYOUT, root, mode: 'off', start_timeout_ms: BOUND_MS, flush_interval_ms: 500, timers });
    writer = w;
    await w.started();
    const line = (i: number) => Buffer.from(`{"index":${i}}\n`);
    for (let i = 0; i < 3; i++) w.append('records.jsonl', line(i));
    w.append('other.bin', Uint8Array.of(1, 2, 3));
    // One timer for every record appended within the interval.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([500]);
    timers.fire();
    // The worker writes asynchronously: a session close after the appends resolves once their batch is done.
    const sink = w.openSession('s1');
    sink.receipt(receipt(0));
    const closed = sink.close();
    timers.fire();
    await closed;
    expect(await readFile(join(root, 'records.jsonl'), 'utf8')).toBe('{"index":0}\n{"index":1}\n{"index":2}\n');
    for (let i = 3; i < 5; i++) w.append('records.jsonl', line(i));
    await w.close();
    writer = undefined;
    expect((await readFile(join(root, 'records.jsonl'), 'utf8')).split('\n').filter(Boolean)).toEqual([0, 1, 2, 3, 4].map((i) => `{"index":${i}}`));
    expect([...(await readFile(join(root, 'other.bin')))]).toEqual([1, 2, 3]);
  });

  it('names a run record it cannot append, takes no more for that file, and goes on writing the rest', async () => {
    const timers = new ManualTimers();
    writer = new TraceWriter({ layout: LAYOUT, root, mode: 'off', start_timeout_ms: BOUND_MS, flush_interval_ms: 20, timers });
    await writer.started();
    const lost = new Promise<Error>((resolve) => writer?.once('record_failed', resolve));
    writer.append('no-such-dir/records.jsonl', Buffer.from('{}\n'));
    writer.append('records.jsonl', Buffer.from('{"a":1}\n'));
    timers.fire();
    const err = await lost;
    expect(err).toBeInstanceOf(TraceWriteError);
    expect((err as TraceWriteError).errno).toBe('ENOENT');
    expect(err.message).toContain(join(root, 'no-such-dir', 'records.jsonl'));
    expect(writer.recordFailure).toBe(err);
    expect(writer.lost('no-such-dir/records.jsonl')).toBe(true);
    // The writer is alive: no run failure, and the other file and a session still get written.
    expect(writer.failure).toBeNull();
    writer.append('no-such-dir/records.jsonl', Buffer.from('{}\n'));
    writer.append('records.jsonl', Buffer.from('{"a":2}\n'));
    const sink = writer.openSession('s1');
    sink.receipt(receipt(0));
    const closed = sink.close();
    // The records' hand-over and the close's window: both timers, then the session is on disk.
    while (timers.pending.length > 0) timers.fire();
    await closed;
    await writer.close();
    writer = undefined;
    expect(await readFile(join(root, 'records.jsonl'), 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    expect(JSON.parse(await readFile(join(root, 'sessions', 's1', 'input-send-receipts.json'), 'utf8')).appends).toHaveLength(1);
  });

  it('rejects a session close with TraceWriteError carrying the path and errno when its directory cannot be created', async () => {
    const fileRoot = join(root, 'not-a-directory');
    await writeFile(fileRoot, 'x');
    writer = new TraceWriter({ layout: LAYOUT, root: fileRoot, mode: 'off', start_timeout_ms: BOUND_MS });
    await writer.started();
    const sink = writer.openSession('s1');
    sink.receipt(receipt(0));
    const error = await sink.close().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(TraceWriteError);
    const e = error as TraceWriteError;
    expect(e.name).toBe('TraceWriteError');
    expect(e.code).toBe('TRACE_WRITE_FAILED');
    expect(e.errno).toBe('ENOTDIR');
    const dir = join(fileRoot, 'sessions', 's1');
    expect([dir, join(dir, 'input-send-receipts.json')]).toContain(e.path);
    expect(e.message).toContain(e.path);

    // Only that session fails: the writer goes on for the others.
    expect(writer.failure).toBeNull();
  });

  it('fails its close, naming why, when the writer cannot finish in time; it is ended, never left running', async () => {
    const w = new TraceWriter({ layout: LAYOUT, root, mode: 'full', delay_ms_per_batch: 2000, start_timeout_ms: BOUND_MS });
    await w.started();
    const sink = w.openSession('slow');
    sink.sent('{"type":"input_audio_buffer.append"}', 0);
    const error = await w.close(200).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(TraceWriteError);
    expect((error as Error).message).toMatch(/did not finish writing within 200 ms and was ended; its last records may be missing/);
  });

  it('a worker that dies fails every open session and says so', async () => {
    writer = new TraceWriter({ layout: LAYOUT, root, mode: 'full', start_timeout_ms: BOUND_MS });
    await writer.started();
    const sink = writer.openSession('s');
    sink.sent('{"type":"input_audio_buffer.append"}', 0);
    await writer.killWorker();
    const error = await sink.close().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(TraceWriteError);
    expect(writer.failure?.message).toMatch(/the trace writer thread exited with code/);
  });

  it('fails its start at once, naming why, when the writer thread dies before it starts (its module missing)', async () => {
    const timers = new ManualTimers();
    const w = new TraceWriter({ layout: LAYOUT, root, mode: 'off', start_timeout_ms: 60_000, timers, worker_file: join(root, 'no-such-writer-worker.js') });
    // No timer is fired: the rejection comes from the thread's own exit, not from the 60 s bound.
    let bound: NodeJS.Timeout | undefined;
    const outlasted = new Promise<never>((_, reject) => (bound = setTimeout(() => reject(new Error(`no failure within ${BOUND_MS} ms`)), BOUND_MS)));
    await expect(Promise.race([w.started(), outlasted]).finally(() => clearTimeout(bound))).rejects.toThrow(/trace writer thread (exited with code 1 before it started|failed to start)/);
    await w.close().catch(() => undefined);
  });
});
