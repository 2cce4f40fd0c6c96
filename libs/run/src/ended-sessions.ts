import type { ResponseRecord, SessionResponseMetrics } from '@duplex-bench/metrics';
import { RUN_FILES, type DuplexAggregate } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';

/** What the run's figures read of a response (`duplexMetrics`, `vllmOmniFigures`); the whole record is in duplex_metrics.json. */
const FIGURE_FIELDS = ['ttft_ms', 'ttfp_ms', 'client_ttft_ms', 'client_ttfp_ms', 'ttft_origin', 'ttfp_origin', 'rtf', 'tpot_ms', 'tpot_origin', 'audio_duration_origin'] as const;

/** What they read of a session's response figures. */
const METRIC_FIELDS = ['responses_unfinished', 'stream_ttft_ms', 'stream_ttfp_ms', 'stream_rtf', 'output_gap_max_ms', 'drift_max_ms', 'playback_underruns', 'input_end_held_ms'] as const;

/** A session's row in sessions.jsonl: its outcome in brief (responses in duplex_metrics.json, a conversation's in turns.jsonl and speech.jsonl). */
export function sessionRow({ responses: _r, response_metrics: _m, turns: _t, speech: _s, ...brief }: SessionResult): Omit<SessionResult, 'responses' | 'response_metrics' | 'turns' | 'speech'> {
  return brief;
}

/** sessions.jsonl: one row per session, each ending in a newline. */
export function sessionLines(results: SessionResult[]): string {
  return results.map((r) => `${JSON.stringify(sessionRow(r))}\n`).join('');
}

/**
 * Sessions of an arrival run as they end: each one's row goes to sessions.jsonl and its responses
 * to duplex_metrics.json at once (appended in the writer thread: `append`), and what stays in
 * memory is what the summary's figures read of it, its counts and a few numbers per response, not
 * its records (a run of hours holds its sessions in flight, not every session it had).
 */
export class EndedSessions {
  private duplexRows = 0;
  private said: Record<string, string> | undefined;
  /** The sessions that ended, as the figures read them. */
  readonly results: SessionResult[] = [];

  constructor(private readonly append: (file: string, text: string) => void) {}

  add(r: SessionResult): void {
    this.append(RUN_FILES.sessions, `${JSON.stringify(sessionRow(r))}\n`);
    if (r.response_metrics) {
      const row = { session_id: r.id, completed: r.completed, ...(r.reason ? { reason: r.reason } : {}), ...r.response_metrics, responses: r.responses };
      this.append(RUN_FILES.duplex_metrics, `${this.duplexRows++ === 0 ? '{"duplex_session_metrics":[\n' : ',\n'}${JSON.stringify(row)}`);
    }
    this.results.push(this.forFigures(r));
  }

  /** The end of duplex_metrics.json after its rows: the aggregate; null when no session was answered. */
  duplexTail(aggregate: DuplexAggregate): string | null {
    return this.duplexRows === 0 ? null : `\n],${JSON.stringify(aggregate).slice(1)}\n`;
  }

  /** The session without its records: only what the summary's figures read. */
  private forFigures(r: SessionResult): SessionResult {
    const { responses, response_metrics, ...rest } = r;
    const kept: SessionResult = rest;
    if (response_metrics) kept.response_metrics = pick(response_metrics, METRIC_FIELDS) as SessionResponseMetrics;
    if (responses) {
      kept.responses = responses.map((x) => {
        const slim = pick(x, FIGURE_FIELDS) as ResponseRecord;
        // The server's stated origin is the same sentence in every response: one copy is kept, for the summary's origin line.
        if (x.server_measurement_origin && !this.said) slim.server_measurement_origin = this.said = x.server_measurement_origin;
        return slim;
      });
    }
    return kept;
  }
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
