import { readFile } from 'node:fs/promises';
import type { SessionSpeech, TurnRecord } from '@duplex-bench/metrics';
import type { SamplerFooter, ThreadSample } from '@duplex-bench/telemetry';
import { ResultsInputError } from './input-error';
import { parseJsonLines, RunFileError, runFile, type RunFile } from './run-files';

/** Records as JSON lines, each ended by a line break ('' for none). */
export function jsonLines(records: unknown[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join('');
}

/**
 * A JSON-lines run file, one record a line; null when the run has none; a line that does not parse
 * is BAD_RUN_FILE. `growing`: the file may still be written to, so a last line not yet ended is
 * left for the next read.
 */
async function readRunLines<T>(dir: string, file: RunFile, growing = false): Promise<T[] | null> {
  const path = runFile(dir, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ResultsInputError('BAD_RUN_FILE', `${path}: ${(err as Error).message}`);
  }
  try {
    return parseJsonLines<T>(path, growing ? text.slice(0, text.lastIndexOf('\n') + 1) : text);
  } catch (err) {
    if (err instanceof RunFileError) throw new ResultsInputError('BAD_RUN_FILE', err.message);
    throw err;
  }
}

/** `--conversation`: the run's behaviour events (turns.jsonl); null for a run without a conversation. */
export function readTurns(dir: string): Promise<TurnRecord[] | null> {
  return readRunLines<TurnRecord>(dir, 'turns');
}

/** `--conversation`: every session's steps, model speech and response events (speech.jsonl); null when the run wrote none. */
export function readSessionSpeech(dir: string): Promise<SessionSpeech[] | null> {
  return readRunLines<SessionSpeech>(dir, 'speech');
}

/** One scrape of the server's /metrics (server_metrics.jsonl): when, whether it answered, and each watched histogram's interval figures. */
export interface ServerMetricsRow {
  t_s: number;
  ok: boolean;
  error?: string;
  samples?: Array<[string, Record<string, string>, number]>;
  since_previous?: Record<string, { count: number; p50: number | null; p99: number | null }>;
}

/** `--server-metrics`: every scrape of the run (server_metrics.jsonl); null when the run scraped none. */
export function readServerMetrics(dir: string): Promise<ServerMetricsRow[] | null> {
  return readRunLines<ServerMetricsRow>(dir, 'server_metrics');
}

/**
 * `--sampler`: the sampler's looks at process `pid` in time order, and its own account; null when
 * the run has no sampler file. The file may still be growing (a launcher's sampler): a last line
 * not yet ended is left for the next read.
 */
export async function readSamplerFile(dir: string, pid: number): Promise<{ samples: ThreadSample[]; footer: SamplerFooter | null } | null> {
  const rows = await readRunLines<unknown>(dir, 'sampler', true);
  if (!rows) return null;
  const samples: ThreadSample[] = [];
  let footer: SamplerFooter | null = null;
  for (const r of rows) {
    if (Array.isArray(r)) {
      const [t_s, p, state, run_ms, wait_ms, wchan] = r as [number, number, string, number, number, string];
      if (p === pid) samples.push({ t_s, pid: p, state, run_ms, wait_ms, wchan });
    } else if (r && typeof r === 'object' && 'sampler' in r) footer = (r as { sampler: SamplerFooter }).sampler;
  }
  return { samples, footer };
}
