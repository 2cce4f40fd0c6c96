/** Messages between the TraceWriter and its worker thread: a tagged union, switched on exhaustively. */

export type TraceMode = 'full' | 'events' | 'off';

/** A session's receipts in columns; the typed arrays are transferred, not copied. */
export interface ReceiptBlock {
  size: number;
  event_ids: string[];
  seq: Int32Array;
  /** scheduled_s, start_s, completed_s for each receipt, interleaved. */
  times: Float64Array;
}

export interface SessionLines {
  session: string;
  /** Whole trace lines, each ending in "\n", as bytes; their buffers are transferred. */
  chunks: Uint8Array[];
  bytes: number;
}

export interface SessionEnd {
  session: string;
  receipts: ReceiptBlock;
}

/** Bytes to append to one of the run's own files (`sessions.jsonl`, `requests.jsonl`, `samples.msgpack`), in order. */
export interface RecordChunks {
  /** The file's path under the run directory. */
  file: string;
  chunks: Uint8Array[];
}

export type ToWorker =
  /** `parts`: receipts of sessions still streaming, to go to their files before their ends. */
  | { kind: 'batch'; batch: number; lines: SessionLines[]; parts: SessionEnd[]; ends: SessionEnd[]; records: RecordChunks[] }
  | { kind: 'stop' };

export interface WriteFailure {
  path: string;
  errno?: string;
  message: string;
}

export type FromWorker =
  | { kind: 'ready' }
  | {
      kind: 'batch_done';
      batch: number;
      bytes: number;
      write_ms: number;
      /** Sessions whose files are complete on disk, with the first failure of each, if any. */
      closed: Array<{ session: string; failure?: WriteFailure }>;
      /** The first failed append to a run file, if one failed in this batch, with the file as the run named it. */
      record_failure?: WriteFailure & { file: string };
    }
  | { kind: 'stopped' };

/** Where a session's files go under the run directory: `<root>/<sessions_dir>/<id>/<trace|receipts>` (the run directory's owner names them). */
export interface TraceLayout {
  sessions_dir: string;
  trace: string;
  receipts: string;
}

export interface WorkerOptions {
  root: string;
  layout: TraceLayout;
  mode: TraceMode;
  /** Test hook: the worker waits this long per batch, as a slow disk would make it. */
  delay_ms_per_batch: number;
  /** Nice value of the writer thread (Linux), above the loop's. */
  nice: number;
}
