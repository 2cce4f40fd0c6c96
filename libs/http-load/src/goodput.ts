import type { RequestRecord } from './request-record';

/** The figures a goodput bound may name (vLLM's `--goodput` names), each in ms. */
export const GOODPUT_FIGURES = ['ttft', 'tpot', 'e2el'] as const;
export type GoodputFigure = (typeof GOODPUT_FIGURES)[number];

/** Upper bounds in ms; a request is good when it completed and meets every bound given. */
export type GoodputBounds = Partial<Record<GoodputFigure, number>>;

/**
 * `ttft:300,tpot:50,e2el:1000` (vLLM's `KEY:VALUE` pairs, joined by commas or spaces), or null
 * with the reason it cannot be read.
 */
export function parseGoodput(text: string): { bounds: GoodputBounds } | { error: string } {
  const bounds: GoodputBounds = {};
  const pairs = text.split(/[\s,]+/).filter((p) => p !== '');
  if (pairs.length === 0) return { error: 'no KEY:MS pair' };
  for (const pair of pairs) {
    const m = /^([a-z0-9_]+):([0-9]+(?:\.[0-9]+)?)$/.exec(pair);
    if (!m) return { error: `cannot read "${pair}" (KEY:MS, a non-negative number of ms)` };
    if (!(GOODPUT_FIGURES as readonly string[]).includes(m[1])) return { error: `unknown figure "${m[1]}"; the figures are ${GOODPUT_FIGURES.join(', ')}` };
    bounds[m[1] as GoodputFigure] = Number(m[2]);
  }
  return { bounds };
}

/** One request's goodput figures, ms, each from the same start (`from_s`); null where it never got that far. */
export interface GoodputValues {
  ttft: number | null;
  tpot: number;
  e2el: number | null;
}

/**
 * Whether a completed request meets every bound (vLLM's rule: each figure at or under its bound;
 * a request of one output token has a TPOT of 0). A request that failed is never good.
 */
export function meetsGoodput(bounds: GoodputBounds, v: GoodputValues): boolean {
  if (bounds.ttft !== undefined && (v.ttft === null || v.ttft > bounds.ttft)) return false;
  if (bounds.tpot !== undefined && v.tpot > bounds.tpot) return false;
  if (bounds.e2el !== undefined && (v.e2el === null || v.e2el > bounds.e2el)) return false;
  return true;
}

/**
 * Our own figures of a finished request, as the summary reports them: TTFT and E2E from the time
 * it was let go (its intended start, or the end of its client queue), TPOT between its first and
 * last output.
 */
export function ownGoodputValues(r: RequestRecord): GoodputValues {
  const from = r.dispatched_s ?? r.intended_s;
  const ms = (t: number | null) => (t === null ? null : Math.max(0, (t - from) * 1000));
  const tpot = r.first_token_s !== null && r.last_token_s !== null && r.tokens >= 2 ? ((r.last_token_s - r.first_token_s) * 1000) / (r.tokens - 1) : 0;
  return { ttft: ms(r.first_token_s), tpot, e2el: ms(r.end_s) };
}

/** Good requests of a run, raw and steady, as they end. */
export class GoodputTally {
  good = 0;
  steady_good = 0;

  constructor(readonly bounds: GoodputBounds) {}

  add(r: RequestRecord, steady: boolean): void {
    if (r.error !== null || r.end_s === null) return;
    if (!meetsGoodput(this.bounds, ownGoodputValues(r))) return;
    this.good++;
    if (steady) this.steady_good++;
  }
}

/** `ttft:300,tpot:50` as given back. */
export const goodputText = (b: GoodputBounds): string =>
  GOODPUT_FIGURES.filter((k) => b[k] !== undefined)
    .map((k) => `${k}:${b[k]}`)
    .join(',');
