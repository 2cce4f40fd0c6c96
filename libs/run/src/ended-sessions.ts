import type { ResponseRecord, SessionResponseMetrics } from '@duplex-bench/metrics';
import { DuplexMetricsRows, RUN_FILES, type DuplexAggregate } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';

/** What the run's figures read of a response (`duplexMetrics`, `vllmOmniFigures`), as numbers; the whole record is in duplex_metrics.json. */
const RESPONSE_NUMBERS = ['ttft_ms', 'ttfp_ms', 'client_ttft_ms', 'client_ttfp_ms', 'rtf', 'tpot_ms'] as const;
/** …and as one of a few sentences each. */
const RESPONSE_ORIGINS = ['ttft_origin', 'ttfp_origin', 'tpot_origin', 'audio_duration_origin'] as const;
/** What they read of a session's response figures. */
const METRIC_NUMBERS = ['responses_unfinished', 'stream_ttft_ms', 'stream_ttfp_ms', 'stream_rtf', 'output_gap_max_ms', 'drift_max_ms', 'playback_underruns', 'input_end_held_ms'] as const;
/**
 * What the end of the run reads of a session besides its responses: the summary's counts, the
 * grants, a conversation's behaviour, the trace to remove. Every session has an id, completed,
 * violation and these counts, kept in columns; the RARE_FIELDS (a reason, server errors, a
 * conversation's turns) only some sessions have, and only those keep them, as an object.
 */
const COUNT_FIELDS = ['packets_sent', 'server_errors'] as const;
const RARE_FIELDS = ['reason', 'server_error_codes', 'server_error', 'dialect_events', 'server_event_seq', 'delta_sample_rates', 'turns', 'overlap_ms', 'speech', 'conversation'] as const;

type Typed = Float64Array | Int32Array | Uint16Array | Uint8Array;

/** Values per chunk of a column: a column grows by one chunk at a time, never by a copy of all it holds. */
const CHUNK_SHIFT = 10;
const CHUNK = 1 << CHUNK_SHIFT;

/**
 * Numbers in typed arrays of CHUNK values each: no object, array slot or heap number per value,
 * and, unlike an array grown by doubling, no copy of the whole and no half-empty slack (a run of
 * hours would step up by the whole column each time it doubled).
 */
class Column<A extends Typed> {
  size = 0;
  private readonly chunks: A[] = [];

  constructor(private readonly make: (length: number) => A) {}

  push(v: number): void {
    if ((this.size & (CHUNK - 1)) === 0) this.chunks.push(this.make(CHUNK));
    this.chunks[this.size >> CHUNK_SHIFT][this.size & (CHUNK - 1)] = v;
    this.size++;
  }

  at(i: number): number {
    return this.chunks[i >> CHUNK_SHIFT][i & (CHUNK - 1)];
  }
}

/** Numbers or null (as NaN). */
class Floats {
  private readonly values = new Column((n) => new Float64Array(n));

  push(v: number | null | undefined): void {
    this.values.push(v ?? NaN);
  }

  at(i: number): number | null {
    const v = this.values.at(i);
    return Number.isNaN(v) ? null : v;
  }
}

/** One of a few strings per value (a response's stated origins), as its index in a table. */
class Codes {
  private readonly table: string[] = [];
  private readonly index = new Map<string, number>();
  private readonly codes = new Column((n) => new Uint16Array(n));

  push(v: string): void {
    let i = this.index.get(v);
    if (i === undefined) {
      if (this.table.length === 0xffff) throw new RangeError(`more than ${0xffff} different strings in one column: ${JSON.stringify(v).slice(0, 80)}`);
      i = this.table.push(v) - 1;
      this.index.set(v, i);
    }
    this.codes.push(i);
  }

  at(i: number): string {
    return this.table[this.codes.at(i)];
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
  /** duplex_metrics.json's rows, as the sessions end. */
  readonly duplex = new DuplexMetricsRows();
  private said: Record<string, string> | undefined;
  /** Per ended session, in order: its id, whether it completed and broke its cadence, its counts. */
  private readonly ids: string[] = [];
  private readonly completed = new Column((n) => new Uint8Array(n));
  private readonly violation = new Column((n) => new Uint8Array(n));
  private readonly counts = Object.fromEntries(COUNT_FIELDS.map((k) => [k, new Column((n) => new Int32Array(n))])) as Record<(typeof COUNT_FIELDS)[number], Column<Int32Array>>;
  /** Its responses in the columns below, in order (−1: it had no list of them), and whether it has response figures (a row of them). */
  private readonly responseCount = new Column((n) => new Int32Array(n));
  private readonly hasMetrics = new Column((n) => new Uint8Array(n));
  /** The fields few sessions have, for those that have any, by session index. */
  private readonly rare = new Map<number, Partial<SessionResult>>();
  private readonly numbers = Object.fromEntries(RESPONSE_NUMBERS.map((k) => [k, new Floats()])) as Record<(typeof RESPONSE_NUMBERS)[number], Floats>;
  private readonly origins = Object.fromEntries(RESPONSE_ORIGINS.map((k) => [k, new Codes()])) as Record<(typeof RESPONSE_ORIGINS)[number], Codes>;
  private readonly metricNumbers = Object.fromEntries(METRIC_NUMBERS.map((k) => [k, new Floats()])) as Record<(typeof METRIC_NUMBERS)[number], Floats>;

  constructor(private readonly append: (file: string, text: string) => void) {}

  add(r: SessionResult): void {
    this.append(RUN_FILES.sessions, `${JSON.stringify(sessionRow(r))}\n`);
    const row = this.duplex.add(r);
    if (row !== null) this.append(RUN_FILES.duplex_metrics, row);
    const rare = pick(r, RARE_FIELDS);
    if (Object.keys(rare).length > 0) this.rare.set(this.ids.length, rare);
    this.ids.push(r.id);
    this.completed.push(r.completed ? 1 : 0);
    this.violation.push(r.violation ? 1 : 0);
    for (const k of COUNT_FIELDS) this.counts[k].push(r[k]);
    this.responseCount.push(r.responses?.length ?? -1);
    for (const x of r.responses ?? []) {
      for (const k of RESPONSE_NUMBERS) this.numbers[k].push(x[k]);
      for (const k of RESPONSE_ORIGINS) this.origins[k].push(x[k]);
      // The server's stated origin is the same sentence in every response: one copy is kept, for the summary's origin line.
      this.said ??= x.server_measurement_origin;
    }
    this.hasMetrics.push(r.response_metrics ? 1 : 0);
    if (r.response_metrics) for (const k of METRIC_NUMBERS) this.metricNumbers[k].push(r.response_metrics[k]);
  }

  /** The end of duplex_metrics.json after its rows: the aggregate; null when no session was answered. */
  duplexTail(aggregate: DuplexAggregate): string | null {
    return this.duplex.tail(aggregate);
  }

  /** The sessions that ended, rebuilt from what was kept, as the summary's figures read them (made once, at the end of the run). */
  results(): SessionResult[] {
    let saidGiven = false;
    let response = 0;
    let metricsRow = 0;
    return this.ids.map((id, s) => {
      const r = { id, completed: this.completed.at(s) === 1, violation: this.violation.at(s) === 1 } as SessionResult;
      for (const k of COUNT_FIELDS) r[k] = this.counts[k].at(s);
      Object.assign(r, this.rare.get(s));
      const count = this.responseCount.at(s);
      if (count >= 0) {
        r.responses = Array.from({ length: count }, () => {
          const i = response++;
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
      if (this.hasMetrics.at(s) === 1) {
        const m = metricsRow++;
        r.response_metrics = Object.fromEntries(METRIC_NUMBERS.map((f) => [f, this.metricNumbers[f].at(m)])) as unknown as SessionResponseMetrics;
      }
      return r;
    });
  }
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
