import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The files of a run directory (DESIGN.md, "Files a run writes"), named in this one place: every
 * lib and app finds them through `runFile` and `sessionFile`, reads them with `readRunJson` and
 * writes them with `writeRunJson`.
 */
export const RUN_FILES = {
  /** The figures and the verdict. */
  summary: 'summary.json',
  /** Metadata: command line, layout, host, clocks, grants. */
  run: 'run.json',
  /** Every session's outcome in brief, one line each (an arrival run writes each as its session ends). */
  sessions: 'sessions.jsonl',
  /** Every packet's raw times, per session (msgpackr), and the encoded histograms, for merging. */
  samples: 'samples.msgpack',
  /** Per-process loop lag, GC, CPU and backlog over time. */
  timeline: 'timeline.json',
  /** Every session's responses and stream figures, vLLM-Omni's file shape. */
  duplex_metrics: 'duplex_metrics.json',
  /** `--conversation`: one behaviour event per line (turn, barge-in, pause, backchannel). */
  turns: 'turns.jsonl',
  /** `--conversation`: one line per session: its steps, model speech spans and response events (the report's timeline). */
  speech: 'speech.jsonl',
  /** http: one record per request. */
  requests: 'requests.jsonl',
  /** `--server-metrics`: one line per scrape of the server's /metrics, on the client's clock. */
  server_metrics: 'server_metrics.jsonl',
  /** `--sampler`: the external sampler's looks at each probe process, `[t_s, pid, state, run_ms, wait_ms, wchan]` a line, its own account last. */
  sampler: 'sampler.jsonl',
  /** `check`'s verdicts. */
  check: 'check.json',
  /** `sweep`'s points and runs. */
  sweep: 'sweep.json',
  /** `compare`'s reps and ratios. */
  compare: 'compare.json',
  /** The HTML page. */
  report: 'report.html',
} as const;

export type RunFile = keyof typeof RUN_FILES;

/** The directory of each session's own files, under the run directory. */
export const SESSIONS_DIR = 'sessions';

/** The files of one session, under `sessions/<id>/`. */
export const SESSION_FILES = {
  /** One `{direction, time_s, event}` line per event. */
  trace: 'trace.jsonl',
  /** `{"appends":[…]}`: every append's send receipt. */
  receipts: 'input-send-receipts.json',
  /** recording: the output audio rebuilt from the trace. */
  output: 'output.wav',
  /** recording: the packets of the attempt a sample's record comes from. */
  pacing: 'pacing.msgpack',
} as const;

export type SessionFile = keyof typeof SESSION_FILES;

/** Where the trace writer puts each session's trace and receipts (tracer `TraceLayout`). */
export const TRACE_LAYOUT = { sessions_dir: SESSIONS_DIR, trace: SESSION_FILES.trace, receipts: SESSION_FILES.receipts } as const;

/** recording: one record per sample as it ends, `samples/<id>.json`. */
export const SAMPLES_DIR = 'samples';

/** The path of a recorded sample's record. */
export function sampleRecordFile(dir: string, sample_id: string): string {
  return join(dir, SAMPLES_DIR, `${sample_id}.json`);
}

/** The path of a run file. */
export function runFile(dir: string, file: RunFile): string {
  return join(dir, RUN_FILES[file]);
}

/** The directory of one session's files. */
export function sessionDir(dir: string, id: string): string {
  return join(dir, SESSIONS_DIR, id);
}

/** The path of one session's file; `attempt` names an earlier attempt's copy (`trace.attempt-N.jsonl`). */
export function sessionFile(dir: string, id: string, file: SessionFile, attempt?: number): string {
  const name = SESSION_FILES[file];
  return join(sessionDir(dir, id), attempt === undefined ? name : name.replace(/\.(\w+)$/, `.attempt-${attempt}.$1`));
}

/** A run file that is there but cannot be read as JSON (cut short, or not JSON): the message names the file and the place. */
export class RunFileError extends Error {
  override readonly name = 'RunFileError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

/**
 * What is wrong with a run file's bytes, in the words every reader uses after the file's path: not
 * valid JSON (or msgpack) with the parser's place, and that the file may be cut short (`cut`: false
 * for a bad line with more after it).
 */
export function notValid(format: 'JSON' | 'msgpack', err: unknown, cut = true): string {
  return `not valid ${format} (${err instanceof Error ? err.message : String(err)})${cut ? '; the file may be cut short' : ''}`;
}

/** A JSON file of a run directory, or null when it is not there; one that is there but not JSON throws RunFileError naming it. */
export async function readJsonFile<T>(path: string): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new RunFileError(path, `cannot read it: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new RunFileError(path, notValid('JSON', err));
  }
}

/** A run file read as JSON; null when it is not there; one that is there but not JSON throws RunFileError naming it (`readJsonFile`). */
export function readRunJson<T>(dir: string, file: RunFile): Promise<T | null> {
  return readJsonFile<T>(runFile(dir, file));
}

/**
 * The records of a JSON-lines file's text, one a line, blank lines skipped; a line that is not JSON
 * throws RunFileError naming the file and the line (the last line: that the file may be cut short).
 */
export function parseJsonLines<T>(path: string, text: string): T[] {
  const lines = text.split('\n');
  const out: T[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as T);
    } catch (err) {
      throw new RunFileError(path, `line ${i + 1}: ${notValid('JSON', err, lines.slice(i + 1).every((l) => l.trim() === ''))}`);
    }
  });
  return out;
}

/**
 * Writes a run file whole, or not at all: to a temporary name, then renamed over the old one, so a
 * reader finds the earlier file or this one, never a part. A failed write (a full disk) removes the
 * temporary file and throws RunFileError naming the file.
 */
export async function writeRunFile(dir: string, file: RunFile, data: string | Uint8Array): Promise<void> {
  const path = runFile(dir, file);
  try {
    await writeFile(`${path}.tmp`, data);
    await rename(`${path}.tmp`, path);
  } catch (err) {
    await rm(`${path}.tmp`, { force: true }).catch(() => undefined);
    throw new RunFileError(path, `cannot write it: ${(err as Error).message}`);
  }
}

/**
 * Writes a run file as JSON (`indent` 1 for the files a person reads, none for the large ones),
 * whole: through a temporary file renamed over it, so a reader finds the earlier file or this one.
 */
export async function writeRunJson(dir: string, file: RunFile, value: unknown, indent: number | undefined = 1): Promise<void> {
  await writeRunFile(dir, file, JSON.stringify(value, null, indent));
}

/**
 * The run's session rows (sessions.jsonl; a run written before it, sessions.json); [] when there are
 * none. A line or file that is not JSON throws RunFileError naming the file (and the line).
 */
export async function readSessionRows<T>(dir: string): Promise<T[]> {
  const path = runFile(dir, 'sessions');
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text !== null) return parseJsonLines<T>(path, text);
  const old = await readJsonFile<{ sessions?: T[] }>(join(dir, 'sessions.json'));
  return old?.sessions ?? [];
}
