import { createUsHistogram, decodeHistogram, encodeHistogram, recordMs, type Histogram } from './histogram';

/** A step of a conversation as it played (libs/audio's StepRecord): seconds on the session's clock. */
export interface PlayedStep {
  pass: number;
  step: number;
  kind: 'say' | 'listen' | 'silence';
  expect?: 'stop' | 'hold' | 'continue';
  start_s: number;
  end_s: number | null;
  speech_start_s?: number;
  speech_end_s?: number;
  ended_by?: 'trigger' | 'max_s' | 'session_end';
  cut?: boolean;
}

/** A stretch of model speech on the playout clock, seconds. */
export interface SpeechSpan {
  start_s: number;
  end_s: number;
}

/** The dialect's word that a response ended, and how. */
export interface ResponseEndEvidence {
  t_s: number;
  status?: string;
}

export type TurnKind = 'response' | 'stop' | 'pause' | 'backchannel';

export type TurnOutcome = 'answered' | 'no_response' | 'stopped' | 'no_stop' | 'not_speaking' | 'held' | 'took_over' | 'yielded' | 'continued';

/** One behaviour event of one session: a line of turns.jsonl. Times are ms from the session's first packet. */
export interface TurnRecord {
  session: string;
  pass: number;
  step: number;
  kind: TurnKind;
  outcome: TurnOutcome;
  /** The user's speech (say) or the pause (silence). */
  user_start_ms: number;
  user_end_ms: number;
  /** The model speech span the figure reads, when there is one. */
  model_start_ms?: number;
  model_end_ms?: number;
  /** response: end of the utterance → start of the model's next span; stop: barge-in start → end of the span playing. */
  latency_ms?: number;
  /** stop: barge-in start → the dialect's cancel evidence, where one came. */
  cancel_latency_ms?: number;
  cancel_status?: string;
}

export interface BehaviourOptions {
  /** A stop not seen within this of the barge-in is `no_stop`, s (`--max-stop-s`). */
  max_stop_s: number;
  /** A span in a pause counts as a takeover from this long, ms (`--takeover-min-ms`). */
  takeover_min_ms: number;
  /** A listen's bound, s, when its step gives none: a response after it is `no_response`. */
  listen_max_s: (step: number) => number;
}

/** Backchannel: the playing span ends within this of the backchannel's end, and none starts within this after. */
const YIELD_WINDOW_S = 1;
const CANCEL_STATUSES = new Set(['cancelled', 'listen']);

/**
 * One session's behaviour events from what it played (its steps), what the user heard (the model's
 * speech spans on the playout clock) and what the dialect said (response ends), by the
 * definitions of DESIGN.md ("Conversations"). Steps the session cut short give none, nor do a
 * stop or a backchannel the end of the session's input may have decided: a playing span that ends
 * after the input ended (the model may have gone quiet because the session did), or a
 * backchannel whose yield window reaches past it.
 */
export function sessionTurns(session: string, steps: PlayedStep[], spans: SpeechSpan[], ends: ResponseEndEvidence[], origin_s: number, o: BehaviourOptions): TurnRecord[] {
  const ms = (t_s: number) => Math.round((t_s - origin_s) * 1e6) / 1000;
  const playingAt = (t_s: number) => spans.find((s) => s.start_s <= t_s && t_s < s.end_s);
  // When the session's input ended: the end of its last step (unknown while a step is open).
  const input_end_s = steps.at(-1)?.end_s ?? Infinity;
  const out: TurnRecord[] = [];
  steps.forEach((step, i) => {
    if (step.cut || step.end_s === null) return;
    const base = { session, pass: step.pass, step: step.step };
    if (step.kind === 'silence') {
      if (step.expect !== 'hold') return;
      const taken = spans.find((s) => s.start_s >= step.start_s && s.start_s < (step.end_s as number) && (s.end_s - s.start_s) * 1000 >= o.takeover_min_ms);
      const turn: TurnRecord = { ...base, kind: 'pause', outcome: taken ? 'took_over' : 'held', user_start_ms: ms(step.start_s), user_end_ms: ms(step.end_s) };
      if (taken) Object.assign(turn, { model_start_ms: ms(taken.start_s), model_end_ms: ms(taken.end_s) });
      out.push(turn);
      return;
    }
    if (step.kind !== 'say' || step.speech_start_s === undefined || step.speech_end_s === undefined) return;
    const user = { user_start_ms: ms(step.speech_start_s), user_end_ms: ms(step.speech_end_s) };
    if (step.expect === 'stop' || step.expect === 'continue') {
      const start_s = step.speech_start_s;
      const span = playingAt(start_s);
      const kind: TurnKind = step.expect === 'stop' ? 'stop' : 'backchannel';
      if (!span) {
        out.push({ ...base, kind, outcome: 'not_speaking', ...user });
        return;
      }
      if (span.end_s > input_end_s) return;
      if (kind === 'backchannel' && Math.max(step.speech_end_s, span.end_s) + YIELD_WINDOW_S > input_end_s) return;
      const turn: TurnRecord = { ...base, kind, outcome: 'stopped', ...user, model_start_ms: ms(span.start_s), model_end_ms: ms(span.end_s) };
      if (kind === 'stop') {
        const stopped = span.end_s - start_s <= o.max_stop_s;
        turn.outcome = stopped ? 'stopped' : 'no_stop';
        if (stopped) turn.latency_ms = Math.round((span.end_s - start_s) * 1e6) / 1000;
        const cancel = ends.find((e) => e.t_s >= start_s && e.status !== undefined && CANCEL_STATUSES.has(e.status));
        if (cancel) Object.assign(turn, { cancel_latency_ms: Math.round((cancel.t_s - start_s) * 1e6) / 1000, cancel_status: cancel.status });
      } else {
        const ended = span.end_s <= step.speech_end_s + YIELD_WINDOW_S;
        const resumed = spans.some((s) => s.start_s > span.end_s && s.start_s <= span.end_s + YIELD_WINDOW_S);
        turn.outcome = ended && !resumed ? 'yielded' : 'continued';
      }
      out.push(turn);
      return;
    }
    // An utterance the user ends to hear the answer: one followed by a listen.
    const next = steps[i + 1];
    if (!next || next.kind !== 'listen' || next.pass !== step.pass) return;
    const end_s = step.speech_end_s;
    // The answer starts while the user listens: a span that starts once the user spoke again answers something else.
    const answer = spans.find((s) => s.start_s > end_s);
    const within = answer !== undefined && answer.start_s - end_s <= o.listen_max_s(next.step) && (next.end_s === null || answer.start_s < next.end_s);
    // No answer yet when the session ended inside its bound: nothing to say of it.
    if (!within && next.cut) return;
    const turn: TurnRecord = { ...base, kind: 'response', outcome: within ? 'answered' : 'no_response', ...user };
    if (within && answer) Object.assign(turn, { model_start_ms: ms(answer.start_s), model_end_ms: ms(answer.end_s), latency_ms: Math.round((answer.start_s - end_s) * 1e6) / 1000 });
    out.push(turn);
  });
  return out;
}

/** A rate with its count and 95% Wilson interval; null rate when nothing was counted. */
export interface BehaviourRate {
  rate: number | null;
  count: number;
  ci95: [number, number] | null;
}

export interface BehaviourLatency {
  count: number;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
}

/** The summary's `behaviour` block. */
export interface BehaviourSummary {
  response_latency_ms: BehaviourLatency;
  stop_latency_ms: BehaviourLatency;
  cancel_latency_ms: BehaviourLatency;
  pause_takeover_rate: BehaviourRate;
  backchannel_yield_rate: BehaviourRate;
  /** Per session: user and model speech at once, ms. */
  overlap_ms: BehaviourLatency;
  outcomes: Record<string, number>;
  measurement_origin: Record<string, string>;
}

/** The 95% Wilson score interval of `k` of `n`. */
/** k of n as a rate (to 4 places) with n and its 95% Wilson interval; null rate when n is 0. */
export function countedRate(k: number, n: number): BehaviourRate {
  return { rate: n > 0 ? Math.round((k / n) * 1e4) / 1e4 : null, count: n, ci95: wilson95(k, n) };
}

export function wilson95(k: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return [r(Math.max(0, centre - half)), r(Math.min(1, centre + half))];
}

function latencyOf(h: Histogram): BehaviourLatency {
  const count = h.totalCount;
  if (count === 0) return { count, p50: null, p90: null, p95: null, p99: null, max: null };
  const max = h.maxValue;
  const at = (p: number) => Math.round(Math.min(h.getValueAtPercentile(p), max)) / 1000;
  return { count, p50: at(50), p90: at(90), p95: at(95), p99: at(99), max: Math.round(max) / 1000 };
}

/** The encoded form of a recorder, for merging across processes. */
export interface BehaviourParts {
  response: string;
  stop: string;
  cancel: string;
  overlap: string;
  pauses: number;
  takeovers: number;
  backchannels: number;
  yields: number;
  outcomes: Record<string, number>;
}

/** Every session's behaviour events pooled: HDR histograms of the latencies, counts of the rates. */
export class BehaviourRecorder {
  private readonly response = createUsHistogram();
  private readonly stop = createUsHistogram();
  private readonly cancel = createUsHistogram();
  private readonly overlap = createUsHistogram();
  private pauses = 0;
  private takeovers = 0;
  private backchannels = 0;
  private yields = 0;
  private readonly outcomes: Record<string, number> = {};

  constructor(private readonly origin: Record<string, string>) {}

  /** One session's events, and its user/model overlap in ms. */
  add(turns: TurnRecord[], overlap_ms: number): void {
    recordMs(this.overlap, Math.max(0, overlap_ms));
    for (const t of turns) {
      this.outcomes[t.outcome] = (this.outcomes[t.outcome] ?? 0) + 1;
      if (t.kind === 'response' && t.latency_ms !== undefined) recordMs(this.response, t.latency_ms);
      if (t.kind === 'stop' && t.latency_ms !== undefined) recordMs(this.stop, t.latency_ms);
      if (t.kind === 'stop' && t.cancel_latency_ms !== undefined) recordMs(this.cancel, t.cancel_latency_ms);
      if (t.kind === 'pause') {
        this.pauses++;
        if (t.outcome === 'took_over') this.takeovers++;
      }
      if (t.kind === 'backchannel' && t.outcome !== 'not_speaking') {
        this.backchannels++;
        if (t.outcome === 'yielded') this.yields++;
      }
    }
  }

  parts(): BehaviourParts {
    return {
      response: encodeHistogram(this.response),
      stop: encodeHistogram(this.stop),
      cancel: encodeHistogram(this.cancel),
      overlap: encodeHistogram(this.overlap),
      pauses: this.pauses,
      takeovers: this.takeovers,
      backchannels: this.backchannels,
      yields: this.yields,
      outcomes: { ...this.outcomes },
    };
  }

  summary(): BehaviourSummary {
    return behaviourSummary([this.parts()], this.origin);
  }
}

/** The `behaviour` block of several recorders' parts pooled (one process, or a merge of many). */
export function behaviourSummary(parts: BehaviourParts[], measurement_origin: Record<string, string>): BehaviourSummary {
  const pool = (key: 'response' | 'stop' | 'cancel' | 'overlap') => {
    const h = createUsHistogram();
    for (const p of parts) h.add(decodeHistogram(p[key]));
    return latencyOf(h);
  };
  const sum = (key: 'pauses' | 'takeovers' | 'backchannels' | 'yields') => parts.reduce((n, p) => n + p[key], 0);
  const rate = countedRate;
  const outcomes: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
  return {
    response_latency_ms: pool('response'),
    stop_latency_ms: pool('stop'),
    cancel_latency_ms: pool('cancel'),
    pause_takeover_rate: rate(sum('takeovers'), sum('pauses')),
    backchannel_yield_rate: rate(sum('yields'), sum('backchannels')),
    overlap_ms: pool('overlap'),
    outcomes,
    measurement_origin,
  };
}

/** User speech and model speech at once, ms: the overlap of the session's utterances with the spans. */
export function overlapMs(steps: PlayedStep[], spans: SpeechSpan[]): number {
  let total = 0;
  for (const s of steps) {
    if (s.kind !== 'say' || s.speech_start_s === undefined || s.speech_end_s === undefined) continue;
    for (const m of spans) total += Math.max(0, Math.min(s.speech_end_s, m.end_s) - Math.max(s.speech_start_s, m.start_s));
  }
  return Math.round(total * 1e6) / 1000;
}
