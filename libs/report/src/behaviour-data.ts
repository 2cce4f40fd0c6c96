import type { BehaviourSummary, SessionSpeech, TurnKind, TurnOutcome, TurnRecord } from '@duplex-bench/metrics';

/** One behaviour event on a session's timeline: the interval its figure reads, and its outcome said. */
export interface TimelineBehaviour {
  kind: TurnKind;
  outcome: TurnOutcome;
  /** Whether the outcome is the one the script expects (answered, stopped, held, continued); null when it cannot say (the model was not speaking). */
  expected: boolean | null;
  pass: number;
  step: number;
  /** The interval drawn, s since the session's first packet: response end of utterance → model speech; stop barge-in → end of the span; pause and backchannel the user's own. */
  from_s: number;
  to_s: number;
  latency_ms: number | null;
  /** stop: when the dialect's cancel evidence came, s, with its status. */
  cancel_s?: number;
  cancel_status?: string;
  label: string;
}

/** One conversation session drawn: its rows, s since its first packet. */
export interface SessionTimeline {
  process: string;
  session: string;
  model_speech: SessionSpeech['model_speech'];
  end_s: number;
  /** The user's utterances, from their first to their last speech-level sample. */
  user: Array<{ from_s: number; to_s: number; role: 'utterance' | 'barge-in' | 'backchannel'; pass: number; step: number }>;
  /** The pauses inside the user's turn (silence steps). */
  pauses: Array<{ from_s: number; to_s: number; pass: number; step: number }>;
  /** Model speech spans, the ones the figures read. */
  model: Array<[number, number]>;
  /** The dialect's response events as received. */
  events: Array<{ t_s: number; label: string }>;
  behaviours: TimelineBehaviour[];
}

/** A latency's distribution: equal-width bins, their count, and the outcomes of the events it comes from. */
export interface LatencyDistribution {
  count: number;
  /** Bin centres and widths, ms, and the events in each. */
  x_ms: number[];
  width_ms: number;
  counts: number[];
  outcomes: Record<string, number>;
}

/** What a conversation run's page shows of its behaviour. */
export interface BehaviourReport {
  /** The summary's pooled figures (HDR percentiles, rates with their Wilson intervals) and their origin. */
  summary: BehaviourSummary;
  /** From turns.jsonl, every process's. */
  distributions: { response_latency_ms: LatencyDistribution; stop_latency_ms: LatencyDistribution; cancel_latency_ms: LatencyDistribution };
  /** Outcomes of each kind of event, from turns.jsonl. */
  outcomes: Partial<Record<TurnKind, Record<string, number>>>;
  /** Sessions that can be drawn (bounded, MAX_TIMELINES), the one shown first, and why that one. */
  timelines: SessionTimeline[];
  shown: number;
  shown_why: string;
  /** Sessions with a speech record, embedded or not. */
  sessions_with_speech: number;
}

/** Sessions embedded in a page for its timeline selector: a few hundred KB at most. */
export const MAX_TIMELINES = 40;

const EXPECTED: Partial<Record<TurnOutcome, boolean>> = { answered: true, stopped: true, held: true, continued: true, no_response: false, no_stop: false, took_over: false, yielded: false };

const s = (ms: number) => Math.round(ms * 1000) / 1e6;
const fmt = (ms: number) => (Math.round(ms * 10) / 10).toString();
const byId = (a: { process: string; session: string }, b: { process: string; session: string }) =>
  a.process.localeCompare(b.process, 'en', { numeric: true }) || a.session.localeCompare(b.session, 'en', { numeric: true });

/** The behaviour event as drawn: its interval and its label (`response 474 ms`, `pause taken over`). */
export function timelineBehaviour(t: TurnRecord): TimelineBehaviour {
  const base = { kind: t.kind, outcome: t.outcome, expected: EXPECTED[t.outcome] ?? null, pass: t.pass, step: t.step, latency_ms: t.latency_ms ?? null };
  const span = (from_ms: number, to_ms: number, label: string): TimelineBehaviour => ({ ...base, from_s: s(from_ms), to_s: s(Math.max(from_ms, to_ms)), label });
  switch (t.kind) {
    case 'response':
      return t.outcome === 'answered' && t.model_start_ms !== undefined ? span(t.user_end_ms, t.model_start_ms, `response ${fmt(t.latency_ms ?? 0)} ms`) : span(t.user_end_ms, t.user_end_ms, 'no response');
    case 'stop': {
      if (t.outcome === 'not_speaking') return span(t.user_start_ms, t.user_start_ms, 'barge-in: model not speaking');
      const out = span(t.user_start_ms, t.model_end_ms ?? t.user_start_ms, t.outcome === 'stopped' ? `stop ${fmt(t.latency_ms ?? 0)} ms` : 'no stop');
      if (t.cancel_latency_ms !== undefined) {
        out.cancel_s = s(t.user_start_ms + t.cancel_latency_ms);
        if (t.cancel_status) out.cancel_status = t.cancel_status;
        out.label += `; cancel ${fmt(t.cancel_latency_ms)} ms`;
      }
      return out;
    }
    case 'pause':
      return span(t.user_start_ms, t.user_end_ms, t.outcome === 'took_over' ? 'pause taken over' : 'pause held');
    case 'backchannel':
      return span(t.user_start_ms, t.user_end_ms, t.outcome === 'not_speaking' ? 'backchannel: model not speaking' : `backchannel: ${t.outcome}`);
    default: {
      const never: never = t.kind;
      throw new RangeError(`no timeline for a ${String(never)} event`);
    }
  }
}

const eventLabel = (e: SessionSpeech['events'][number]) =>
  e.event === 'created' ? 'response.created' : e.status === 'listen' ? 'response.listen' : e.status ? `response.done ${e.status}` : 'response.done';

/** One session's rows, from its speech record and its behaviour events. */
export function sessionTimeline(process: string, speech: SessionSpeech, turns: TurnRecord[]): SessionTimeline {
  const user: SessionTimeline['user'] = [];
  const pauses: SessionTimeline['pauses'] = [];
  let end_ms = 0;
  for (const step of speech.steps) {
    end_ms = Math.max(end_ms, step.end_ms ?? step.start_ms);
    if (step.kind === 'silence' && step.end_ms !== null) pauses.push({ from_s: s(step.start_ms), to_s: s(step.end_ms), pass: step.pass, step: step.step });
    if (step.kind !== 'say' || step.speech_start_ms === undefined) continue;
    // An utterance the session cut before its last speech sample ends with the session.
    const to_ms = step.speech_end_ms ?? step.end_ms ?? step.speech_start_ms;
    user.push({ from_s: s(step.speech_start_ms), to_s: s(to_ms), role: step.expect === 'stop' ? 'barge-in' : step.expect === 'continue' ? 'backchannel' : 'utterance', pass: step.pass, step: step.step });
  }
  for (const [, to] of speech.model) end_ms = Math.max(end_ms, to);
  for (const e of speech.events) end_ms = Math.max(end_ms, e.t_ms);
  return {
    process,
    session: speech.session,
    model_speech: speech.model_speech,
    end_s: s(end_ms),
    user,
    pauses,
    model: speech.model.map(([a, b]) => [s(a), s(b)]),
    events: speech.events.map((e) => ({ t_s: s(e.t_ms), label: eventLabel(e) })),
    behaviours: turns.filter((t) => t.session === speech.session).map(timelineBehaviour),
  };
}

/** Equal-width bins over the values (about √n, 5 to 40 of them, none narrower than 1 ms, centred on the values), for a histogram. */
export function latencyDistribution(values: number[], outcomes: Record<string, number>): LatencyDistribution {
  if (values.length === 0) return { count: 0, x_ms: [], width_ms: 0, counts: [], outcomes };
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  // Latencies a few hundred µs apart share a bar, with empty bins either side to show its width.
  const width = Math.max(1, (max - min) / Math.min(40, Math.max(5, Math.ceil(Math.sqrt(values.length)))));
  const bins = Math.max(5, Math.ceil((max - min) / width - 1e-9));
  // The bins centred on the values' range.
  const lo = min - (bins * width - (max - min)) / 2;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]++;
  const r = (v: number) => Math.round(v * 1000) / 1000;
  return { count: values.length, x_ms: counts.map((_, i) => r(lo + (i + 0.5) * width)), width_ms: r(width), counts, outcomes };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];

/**
 * The session a page shows first: the complete session whose median response latency is the
 * (lower) median of the sessions' medians, a typical one rather than the best or the worst; with no
 * response latency measured, the first complete session; else the first.
 */
export function chooseSession(timelines: SessionTimeline[], completed: (process: string, session: string) => boolean): { index: number; why: string } {
  const complete = timelines.map((t, index) => ({ t, index })).filter(({ t }) => completed(t.process, t.session));
  const pool = complete.length > 0 ? complete : timelines.map((t, index) => ({ t, index }));
  const measured = pool
    .map(({ t, index }) => ({ index, values: t.behaviours.filter((b) => b.kind === 'response' && b.latency_ms !== null).map((b) => b.latency_ms as number) }))
    .filter((m) => m.values.length > 0)
    .map((m) => ({ index: m.index, median: median(m.values) }));
  const which = complete.length > 0 ? 'complete session' : 'session (none completed)';
  if (measured.length > 0) {
    const sorted = [...measured].sort((a, b) => a.median - b.median || a.index - b.index);
    const pick = sorted[Math.floor((sorted.length - 1) / 2)];
    return { index: pick.index, why: `the ${which} whose median response latency (${fmt(pick.median)} ms) is the median of ${measured.length} sessions' medians` };
  }
  return { index: pool[0]?.index ?? 0, why: `the first ${which}: no response latency was measured` };
}

/** A conversation run's behaviour for its page: the summary's figures, turns.jsonl's distributions, and the sessions' timelines. */
export function behaviourReport(
  summary: BehaviourSummary,
  processes: Array<{ process: string; turns: TurnRecord[]; speech: SessionSpeech[] }>,
  completed: (process: string, session: string) => boolean,
): BehaviourReport {
  const turns = processes.flatMap((p) => p.turns);
  const outcomes: BehaviourReport['outcomes'] = {};
  for (const t of turns) {
    const of = (outcomes[t.kind] ??= {});
    of[t.outcome] = (of[t.outcome] ?? 0) + 1;
  }
  const values = (kind: TurnKind, pick: (t: TurnRecord) => number | undefined) => turns.filter((t) => t.kind === kind).flatMap((t) => (pick(t) === undefined ? [] : [pick(t) as number]));
  const stops = turns.filter((t) => t.kind === 'stop' && t.outcome !== 'not_speaking');
  const cancels = stops.filter((t) => t.cancel_latency_ms !== undefined).length;
  let all = processes.flatMap((p) => p.speech.map((sp) => sessionTimeline(p.process, sp, p.turns))).sort(byId);
  const sessions_with_speech = all.length;
  let chosen = chooseSession(all, completed);
  if (all.length > MAX_TIMELINES) {
    // The one shown, and the first others in id order.
    const keep = all[chosen.index];
    all = [...all.filter((t) => t !== keep).slice(0, MAX_TIMELINES - 1), keep].sort(byId);
    chosen = { index: all.indexOf(keep), why: chosen.why };
  }
  return {
    summary,
    distributions: {
      response_latency_ms: latencyDistribution(values('response', (t) => t.latency_ms), outcomes.response ?? {}),
      stop_latency_ms: latencyDistribution(values('stop', (t) => t.latency_ms), outcomes.stop ?? {}),
      cancel_latency_ms: latencyDistribution(values('stop', (t) => t.cancel_latency_ms), { 'cancel evidence': cancels, 'no cancel evidence': stops.length - cancels }),
    },
    outcomes,
    timelines: all,
    shown: chosen.index,
    shown_why: chosen.why,
    sessions_with_speech,
  };
}
