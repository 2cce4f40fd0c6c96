import type { RunSummary } from './summary';

/** An SLO text that does not read: the message names the term (`--slo: cannot read "…"`). */
export class SloError extends Error {
  override readonly name = 'SloError';
}

/** The figures an SLO term can name: where each is read in a run's summary, and its unit. */
/** Each figure an SLO term can name: a short label and unit for tables, where it is read in a summary, and what it is. */
export const SLO_FIGURES: Record<string, { label: string; unit: string; read: (s: RunSummary) => number | null | undefined; what: string }> = {
  ttfp_p99_ms: { label: 'TTFP p99', unit: 'ms', read: (s) => s.duplex?.ttfp_ms.p99, what: "TTFP p99 over responses, ms (client, from response.created received)" },
  ttft_p99_ms: { label: 'TTFT p99', unit: 'ms', read: (s) => s.duplex?.ttft_ms.p99, what: 'TTFT p99 over responses, ms (client)' },
  stream_ttfp_p99_ms: { label: 'stream TTFP p99', unit: 'ms', read: (s) => s.duplex?.duplex_stream_ttfp_ms.p99, what: 'stream-window TTFP p99 over sessions, ms (client, from input start)' },
  stream_rtf_p99: { label: 'stream RTF p99', unit: '', read: (s) => s.duplex?.duplex_stream_rtf.p99, what: 'stream-window RTF p99 over sessions (client; about 1 for a model that keeps up with continuous input)' },
  rtf_p99: { label: 'RTF p99', unit: '', read: (s) => s.duplex?.rtf.p99, what: 'RTF p99 over responses (client)' },
  drift_p99_ms: { label: 'drift p99', unit: 'ms', read: (s) => s.duplex?.drift_max_ms.p99, what: "largest lag of a session's audio behind real time, p99 over sessions, ms" },
  output_gap_p99_ms: { label: 'longest output gap p99', unit: 'ms', read: (s) => s.duplex?.output_gap_max_ms.p99, what: 'longest output gap of a session, p99 over sessions, ms' },
  receive_delay_p99_ms: { label: 'client receive delay p99', unit: 'ms', read: (s) => s.receive_delay_ms?.p99, what: "client receive delay p99, ms: each frame's receive stamp minus the server's send stamp (servers that stamp, our mocks with --stamp-sends); no figure where the server stamps none" },
  underruns: { label: 'playback underruns', unit: '', read: (s) => s.duplex?.playback_underruns, what: 'simulated playback underruns, summed over sessions' },
  // An arrival the server refused is blocking, judged by its own rule (sweep --max-blocking), not a session that broke.
  incomplete: { label: 'incomplete sessions', unit: '',
    read: (s) => s.sessions.incomplete - (s.arrivals ? (s.sessions.incomplete_reasons.admission_refused ?? 0) : 0),
    what: 'sessions that did not complete (in an arrival run, those the server refused at admission are blocking, not counted here)',
  },
  unit_lag_p95_ms: { label: 'unit lag p95', unit: 'ms', read: (s) => s.unit_lag_ms?.p95, what: "native: unit lag p95, ms (client: a unit's sglang.unit.done received minus the send of the append that completed its input; sglang-omni's unit_lag_s)" },
  unit_miss_rate: { label: 'unit miss rate', unit: '', read: (s) => s.unit_miss_rate, what: 'native: share of units whose lag exceeds one unit, or that never finished (sglang-omni unit_miss_rate)' },
  response_latency_p95_ms: { label: 'response latency p95', unit: 'ms', read: (s) => s.behaviour?.response_latency_ms.p95, what: "--conversation: response latency p95, ms (client: an utterance's end → the model's next speech span)" },
  stop_latency_p95_ms: { label: 'stop latency p95', unit: 'ms', read: (s) => s.behaviour?.stop_latency_ms.p95, what: "--conversation: stop latency p95, ms (client: a barge-in's start → the end of the model speech playing)" },
  pause_takeover_rate: { label: 'pause takeover rate', unit: '', read: (s) => s.behaviour?.pause_takeover_rate.rate, what: '--conversation: share of pauses in which the model took the turn' },
  backchannel_yield_rate: { label: 'backchannel yield rate', unit: '', read: (s) => s.behaviour?.backchannel_yield_rate.rate, what: '--conversation: share of backchannels after which the model stopped' },
};

/**
 * The figures `run --abort-on-fail` can judge while a run goes on, and how: a count that only grows
 * fails for good as soon as it passes its bound; a percentile is over the responses seen in the
 * steady window (from `--warmup-s` after the start gate) and fails once it has stayed over its
 * bound for the grace. Every other term is judged at the run's end only.
 */
export const LIVE_SLO_FIGURES: Record<string, 'count' | 'percentile'> = {
  incomplete: 'count',
  ttfp_p99_ms: 'percentile',
  ttft_p99_ms: 'percentile',
  rtf_p99: 'percentile',
};

/** Whether a term can be judged before the run's end (`--abort-on-fail`). */
export function judgedLive(term: SloTerm): boolean {
  const kind = LIVE_SLO_FIGURES[term.figure];
  // A count that only grows can be known to fail only against an upper bound.
  return kind === 'percentile' || (kind === 'count' && (term.op === '<=' || term.op === '<' || term.op === '='));
}

type SloFigure = (typeof SLO_FIGURES)[string];

/**
 * The figure a term names: one of SLO_FIGURES, or a server gauge (`gauge:NAME_max`, `gauge:NAME_mean`,
 * `gauge:NAME_last`) read from the summary's `server_metrics.gauges` (`run --server-gauge NAME`).
 */
export function sloFigure(name: string): SloFigure | undefined {
  const known = SLO_FIGURES[name];
  if (known) return known;
  const g = /^gauge:(.+)_(max|mean|last)$/.exec(name);
  if (!g) return undefined;
  const [, gauge, stat] = g;
  return {
    label: `${gauge} ${stat}`,
    unit: '',
    read: (s) => s.server_metrics?.gauges?.[gauge]?.[stat as 'max' | 'mean' | 'last'],
    what: `server gauge ${gauge} (run --server-gauge ${gauge}): its ${stat} over the run's scrapes, in the server's own unit`,
  };
}

export const DEFAULT_SLO = 'underruns=0,ttfp_p99_ms<=1000,incomplete=0';

/** `figure op bound`: a figure of SLO_FIGURES, or `gauge:NAME_stat` (a Prometheus name may hold colons). */
const TERM = /^([a-z0-9_]+|gauge:[a-zA-Z_:][a-zA-Z0-9_:]*_(?:max|mean|last))\s*(<=|>=|<|>|=)\s*(-?[0-9.]+)$/;

const OPS = {
  '<=': (a: number, b: number) => a <= b,
  '>=': (a: number, b: number) => a >= b,
  '<': (a: number, b: number) => a < b,
  '>': (a: number, b: number) => a > b,
  '=': (a: number, b: number) => a === b,
} as const;

export interface SloTerm {
  figure: string;
  op: keyof typeof OPS;
  bound: number;
  text: string;
}

/** `figure<=bound,figure=bound,…`; a SloError names the term that does not parse. */
export function parseSlo(text: string): SloTerm[] {
  return text.split(',').map((raw) => {
    const term = raw.trim();
    const m = TERM.exec(term);
    if (!m) throw new SloError(`--slo: cannot read "${term}" (figure<=number, joined by commas)`);
    if (!sloFigure(m[1])) throw new SloError(`--slo: unknown figure "${m[1]}"; the figures are ${Object.keys(SLO_FIGURES).join(', ')}, and gauge:NAME_max|mean|last for a --server-gauge`);
    const bound = Number(m[3]);
    if (!Number.isFinite(bound)) throw new SloError(`--slo: "${term}" has no number`);
    return { figure: m[1], op: m[2] as SloTerm['op'], bound, text: term };
  });
}

const SIGNS: Record<string, string> = { '<=': '≤', '>=': '≥', '<': '<', '>': '>', '=': '=' };

/** A term as a person reads it: `ttfp_p99_ms<=1000` is "TTFP p99 ≤ 1000 ms"; a term that does not parse is given back. */
export function termLabel(term: string): string {
  const m = TERM.exec(term.trim());
  const f = m ? sloFigure(m[1]) : undefined;
  if (!m || !f) return term;
  return `${f.label} ${SIGNS[m[2]]} ${m[3]}${f.unit ? ` ${f.unit}` : ''}`;
}

export interface SloCheck {
  term: string;
  value: number | null;
  ok: boolean;
}

/** Each term against a run's summary; a figure the run does not have fails its term. */
export function checkSlo(terms: SloTerm[], summary: RunSummary): SloCheck[] {
  return terms.map((t) => {
    const value = sloFigure(t.figure)?.read(summary);
    const v = value === undefined || value === null || !Number.isFinite(value) ? null : value;
    return { term: t.text, value: v, ok: v !== null && OPS[t.op](v, t.bound) };
  });
}
