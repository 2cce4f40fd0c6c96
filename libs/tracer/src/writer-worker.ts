// The trace writer's thread: every file write of a run happens here, in batches, so the event
// loop that paces packets never waits on the disk (seed 000: page writeback stalled a client's
// loop for hundreds of ms when it wrote traces itself).
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '@duplex-bench/pacer';
import type { FromWorker, ToWorker, WorkerOptions, WriteFailure } from './messages';
import { receiptEntries, receiptsJson } from './receipts-json';
import { withoutAudio } from './without-audio';

const options = workerData as WorkerOptions;
const port = parentPort;
if (!port) throw new Error('writer-worker must run as a worker thread');

const failures = new Map<string, WriteFailure>();
/** Open trace files, by session; closed when the session ends. */
const traceFds = new Map<string, number>();
/** Receipts files begun (a part of the session's receipts written), by session; the tail goes at its end. */
const receiptFds = new Map<string, number>();
/** Open run files that records are appended to (`sessions.jsonl`, …), by path; open until the thread stops. */
const recordFds = new Map<string, number>();
const madeDirs = new Set<string>();

function post(message: FromWorker): void {
  port?.postMessage(message);
}

function sessionDir(session: string): string {
  const dir = join(options.root, options.layout.sessions_dir, session);
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirs.add(dir);
  }
  return dir;
}

/** Runs one write for a session; the first failure is kept and later writes of that session skipped. */
function guarded(session: string, path: () => string, write: (path: string) => void): number {
  if (failures.has(session)) return 0;
  let target = '';
  try {
    target = path();
    write(target);
    return 1;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    failures.set(session, { path: e.path ?? (target || join(options.root, options.layout.sessions_dir, session)), errno: e.code, message: e.message });
    return 0;
  }
}

/** Writes a chunk of whole lines; with --trace events, audio payloads become their byte length first. */
function writeChunk(fd: number, chunk: Uint8Array): number {
  if (options.mode !== 'events') {
    writeAll(fd, chunk);
    return chunk.length;
  }
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
  const slim = Buffer.from(text.split('\n').map(withoutAudio).join('\n'), 'latin1');
  writeAll(fd, slim);
  return slim.length;
}

/** The open file of `key` in `fds`, opened (with `flags`) the first time. */
function openOnce(fds: Map<string, number>, key: string, path: string, flags: 'a' | 'w'): number {
  let fd = fds.get(key);
  if (fd === undefined) {
    fd = openSync(path, flags);
    fds.set(key, fd);
  }
  return fd;
}

/** Closes a session's file, whatever failed before it (no descriptor is left open); a failure to close is its first only if it had none. */
function closeFile(session: string, fd: number, path: string): void {
  try {
    closeSync(fd);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (!failures.has(session)) failures.set(session, { path: e.path ?? path, errno: e.code, message: e.message });
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function sleepMs(ms: number): void {
  // Only the test hook blocks, and only this thread.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function onBatch(message: Extract<ToWorker, { kind: 'batch' }>): void {
  const started = performance.now();
  if (options.delay_ms_per_batch > 0) sleepMs(options.delay_ms_per_batch);
  let bytes = 0;
  for (const { session, chunks } of message.lines) {
    guarded(
      session,
      () => join(sessionDir(session), options.layout.trace),
      (path) => {
        const fd = openOnce(traceFds, session, path, 'a');
        for (const chunk of chunks) bytes += writeChunk(fd, chunk);
      },
    );
  }
  let record_failure: (WriteFailure & { file: string }) | undefined;
  for (const { file, chunks } of message.records) {
    const path = join(options.root, file);
    try {
      const fd = openOnce(recordFds, path, path, 'a');
      for (const chunk of chunks) {
        writeAll(fd, chunk);
        bytes += chunk.length;
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      record_failure ??= { path: e.path ?? path, errno: e.code, message: e.message, file };
    }
  }
  // A session's receipts file, a part at a time: its head and first entries, then "," and the next.
  for (const { session, receipts } of message.parts) {
    if (receipts.size === 0) continue;
    const entries = receiptEntries(receipts);
    guarded(
      session,
      () => join(sessionDir(session), options.layout.receipts),
      (path) => {
        const first = !receiptFds.has(session);
        writeAll(openOnce(receiptFds, session, path, 'w'), Buffer.from(first ? `{"appends":[${entries}` : `,${entries}`, 'latin1'));
      },
    );
    bytes += entries.length + 1;
  }
  const closed: Array<{ session: string; failure?: WriteFailure }> = [];
  for (const { session, receipts } of message.ends) {
    const dir = join(options.root, options.layout.sessions_dir, session);
    const fd = traceFds.get(session);
    if (fd !== undefined) {
      traceFds.delete(session);
      closeFile(session, fd, join(dir, options.layout.trace));
    }
    const begun = receiptFds.get(session);
    if (begun !== undefined) {
      // Its parts are in the file: the last entries and the tail close it.
      receiptFds.delete(session);
      const tail = `${receipts.size > 0 ? `,${receiptEntries(receipts)}` : ''}]}`;
      guarded(
        session,
        () => join(dir, options.layout.receipts),
        () => writeAll(begun, Buffer.from(tail, 'latin1')),
      );
      closeFile(session, begun, join(dir, options.layout.receipts));
      bytes += tail.length;
    } else {
      const json = receiptsJson(receipts);
      guarded(session, () => join(sessionDir(session), options.layout.receipts), (p) => writeFileSync(p, json));
      bytes += json.length;
    }
    closed.push({ session, failure: failures.get(session) });
    failures.delete(session);
    madeDirs.delete(dir);
  }
  post({ kind: 'batch_done', batch: message.batch, bytes, write_ms: performance.now() - started, closed, ...(record_failure ? { record_failure } : {}) });
}

port.on('message', (message: ToWorker) => {
  switch (message.kind) {
    case 'batch':
      onBatch(message);
      break;
    case 'stop':
      for (const fd of recordFds.values()) closeSync(fd);
      recordFds.clear();
      post({ kind: 'stopped' });
      port.close();
      break;
    default: {
      const never: never = message;
      throw new Error(`writer-worker: unknown message ${JSON.stringify(never)}`);
    }
  }
});
// At 512 sessions the receipts of every session are formatted here within the same 80 ms in which
// the last packets are due: the pacing loop must win the CPU.
lowerThreadPriority(options.nice);
post({ kind: 'ready' });
