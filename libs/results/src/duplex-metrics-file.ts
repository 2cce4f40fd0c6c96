import { appendFile } from 'node:fs/promises';
import { runFile, writeRunJson } from './run-files';
import type { DuplexAggregate, DuplexMetricsFile } from './summary';
import type { SessionResult } from './session-result';

/**
 * duplex_metrics.json, vLLM-Omni's file shape: every answered session's row, then the aggregate.
 * This module is its only writer, in either of two ways: whole at the end of a run (`writeDuplexMetrics`),
 * or a row at a time as sessions end (`DuplexMetricsRows`, whose lines go through the trace writer)
 * closed by its tail once the run is over.
 */

/** An answered session's row in the file. */
export function duplexMetricsRow(r: SessionResult): Record<string, unknown> {
  return { session_id: r.id, completed: r.completed, ...(r.reason ? { reason: r.reason } : {}), ...r.response_metrics, responses: r.responses };
}

/** Writes the whole file, through a temporary file: a reader finds all of it or none. */
export function writeDuplexMetrics(dir: string, file: DuplexMetricsFile | { duplex_session_metrics: [] }): Promise<void> {
  return writeRunJson(dir, 'duplex_metrics', file);
}

/** The file a row at a time, as sessions end: the text of each row, and the tail that closes it. */
export class DuplexMetricsRows {
  private rows = 0;

  /** The text that adds the session's row; null when it was not answered. */
  add(r: SessionResult): string | null {
    if (!r.response_metrics) return null;
    return `${this.rows++ === 0 ? '{"duplex_session_metrics":[\n' : ',\n'}${JSON.stringify(duplexMetricsRow(r))}`;
  }

  /** The end of the file after its rows: the aggregate; null when no session was answered. */
  tail(aggregate: DuplexAggregate): string | null {
    return this.rows === 0 ? null : `\n],${JSON.stringify(aggregate).slice(1)}\n`;
  }

  /** Appends the tail once every row is on disk; nothing when no session was answered. */
  async close(dir: string, aggregate: DuplexAggregate): Promise<void> {
    const tail = this.tail(aggregate);
    if (tail !== null) await appendFile(runFile(dir, 'duplex_metrics'), tail);
  }
}
