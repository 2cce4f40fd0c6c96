import type { ResponseRecord, SessionResponseMetrics } from '@duplex-bench/metrics';
import { RUN_FILES, type DuplexAggregate } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';

/** What the run's figures read of a response (`duplexMetrics`, `vllmOmniFigures`), as numbers; the whole record is in duplex_metrics.json. */
const RESPONSE_NUMBERS = ['ttft_ms', 'ttfp_ms', 'client_ttft_ms', 'client_ttfp_ms', 'rtf', 'tpot_ms'] as const;
/** …and as one of a few sentences each. */
const RESPONSE_ORIGINS = ['ttft_origin', 'ttfp_origin', 'tpot_origin', 'audio_duration_origin'] as const;
/** What they read of a session's response figures. */
const METRIC_NUMBERS = ['responses_unfinished', 'stream_ttft_ms', 'stream_ttfp_ms', 'stream_rtf', 'output_gap_max_ms', 'drift_max_ms', 'playback_underruns', 'input_end_held_ms'] as const;
/** What the end of the run reads of a session besides its responses: the summary's counts, the grants, a conversation's behaviour, the trace to remove. */
const KEPT_FIELDS = ['id', 'completed', 'reason', 'violation', 'packets_sent', 'server_errors', 'server_error_codes', 'server_error', 'dialect_events', 'server_event_seq', 'delta_sample_rates', 'turns', 'overlap_ms', 'speech', 'conversation'] as const;

/** Numbers in one growing typed array (no object, no heap number per value); null as NaN. */
class Floats {
  size = 0;
  private a = new Float64Array(1024);

  push(v: number | null | undefined): void {
    if (this.size === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.size++] = v ?? NaN;
  }

  at(i: number): number | null {
    const v = this.a[i];
    return Number.isNaN(v) ? null : v;
  }
}

/** One of a few strings per value, as its index in a table. */
class Codes {
  private readonly table: string[] = [];
  private readonly index = new Map<string, number>();
  private readonly codes: number[] = [];

  push(v: string): void {
    let i = this.index.get(v);
    if (i === undefined) {
      i = this.table.push(v) - 1;
      this.index.set(v, i);
    }
    this.codes.push(i);
  }

  at(i: number): string {
    return this.table[this.codes[i]];
  }
}

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
  /** Each ended session's fields the end of the run reads; its responses and figures in the columns below. */
  private readonly kept: Array<Partial<SessionResult>> = [];
  /** Per session: its first response in the columns and how many (−1: it had none), its figures' row (−1: none). */
  private readonly first: number[] = [];
  private readonly count: number[] = [];
  private readonly metricsRow: number[] = [];
  private responses = 0;
  private metrics = 0;
  private readonly numbers = Object.fromEntries(RESPONSE_NUMBERS.map((k) => [k, new Floats()])) as Record<(typeof RESPONSE_NUMBERS)[number], Floats>;
  private readonly origins = Object.fromEntries(RESPONSE_ORIGINS.map((k) => [k, new Codes()])) as Record<(typeof RESPONSE_ORIGINS)[number], Codes>;
  private readonly metricNumbers = Object.fromEntries(METRIC_NUMBERS.map((k) => [k, new Floats()])) as Record<(typeof METRIC_NUMBERS)[number], Floats>;

  constructor(private readonly append: (file: string, text: string) => void) {}

  add(r: SessionResult): void {
    this.append(RUN_FILES.sessions, `${JSON.stringify(sessionRow(r))}\n`);
    if (r.response_metrics) {
      const row = { session_id: r.id, completed: r.completed, ...(r.reason ? { reason: r.reason } : {}), ...r.response_metrics, responses: r.responses };
      this.append(RUN_FILES.duplex_metrics, `${this.duplexRows++ === 0 ? '{"duplex_session_metrics":[\n' : ',\n'}${JSON.stringify(row)}`);
    }
    this.kept.push(pick(r, KEPT_FIELDS));
    this.first.push(r.responses ? this.responses : -1);
    this.count.push(r.responses?.length ?? 0);
    for (const x of r.responses ?? []) {
      for (const k of RESPONSE_NUMBERS) this.numbers[k].push(x[k]);
      for (const k of RESPONSE_ORIGINS) this.origins[k].push(x[k]);
      // The server's stated origin is the same sentence in every response: one copy is kept, for the summary's origin line.
      this.said ??= x.server_measurement_origin;
      this.responses++;
    }
    this.metricsRow.push(r.response_metrics ? this.metrics++ : -1);
    if (r.response_metrics) for (const k of METRIC_NUMBERS) this.metricNumbers[k].push(r.response_metrics[k]);
  }

  /** The end of duplex_metrics.json after its rows: the aggregate; null when no session was answered. */
  duplexTail(aggregate: DuplexAggregate): string | null {
    return this.duplexRows === 0 ? null : `\n],${JSON.stringify(aggregate).slice(1)}\n`;
  }

  /** The sessions that ended, rebuilt from what was kept, as the summary's figures read them (made once, at the end of the run). */
  results(): SessionResult[] {
    let saidGiven = false;
    return this.kept.map((k, s) => {
      const r = { ...k } as SessionResult;
      if (this.first[s] >= 0) {
        r.responses = Array.from({ length: this.count[s] }, (_, j) => {
          const i = this.first[s] + j;
          const x = {} as Record<string, unknown>;
          for (const f of RESPONSE_NUMBERS) x[f] = this.numbers[f].at(i);
          for (const f of RESPONSE_ORIGINS) x[f] = this.origins[f].at(i);
          if (this.said && !saidGiven) {
            x.server_measurement_origin = this.said;
            saidGiven = true;
          }
          return x as unknown as ResponseRecord;
        });
      }
      const m = this.metricsRow[s];
      if (m >= 0) r.response_metrics = Object.fromEntries(METRIC_NUMBERS.map((f) => [f, this.metricNumbers[f].at(m)])) as unknown as SessionResponseMetrics;
      return r;
    });
  }
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
