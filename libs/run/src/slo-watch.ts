import { createUsHistogram, percentilesMs, recordMs, type Histogram } from '@duplex-bench/metrics';
import { every, timersOn, type Clock } from '@duplex-bench/pacer';
import { judgedLive, LIVE_SLO_FIGURES, SLO_FIGURES, type SloTerm } from '@duplex-bench/results';
import type { SessionContext } from '@duplex-bench/session';
import type { Subscription } from 'rxjs';

const OPS: Record<SloTerm['op'], (a: number, b: number) => boolean> = {
  '<=': (a, b) => a <= b,
  '>=': (a, b) => a >= b,
  '<': (a, b) => a < b,
  '>': (a, b) => a > b,
  '=': (a, b) => a === b,
};

/** What a watcher of the live run is told by every session. */
export type SessionHooks = Pick<SessionContext, 'onSessionEnd' | 'onResponse' | 'onFirstOutput'>;

/** Every watcher's hooks called, each for what it watches. */
export function eachHook(...all: Array<SessionHooks | undefined>): SessionHooks {
  const hooks = all.filter((h): h is SessionHooks => h !== undefined);
  if (hooks.length <= 1) return hooks[0] ?? {};
  const of = <K extends keyof SessionHooks>(k: K) => hooks.map((h) => h[k]).filter((f): f is NonNullable<SessionHooks[K]> => f !== undefined);
  const ends = of('onSessionEnd');
  const responses = of('onResponse');
  const firsts = of('onFirstOutput');
  return {
    ...(ends.length > 0 ? { onSessionEnd: (r) => ends.forEach((f) => f(r)) } : {}),
    ...(responses.length > 0 ? { onResponse: (r) => responses.forEach((f) => f(r)) } : {}),
    ...(firsts.length > 0 ? { onFirstOutput: (figure, ms) => firsts.forEach((f) => f(figure, ms)) } : {}),
  };
}

/** Why a run was ended early: the term, its figure then, and when (s after the start gate). */
export interface SloAbort {
  term: string;
  value: number;
  at_s: number;
  /** "passed its bound" (a count) or "over its bound for 10 s" (a percentile). */
  how: string;
}

export interface SloWatchOptions {
  terms: SloTerm[];
  /** How long a percentile may stay failed before the run is ended, seconds. */
  grace_s: number;
  clock: Clock;
  /** Arriving sessions the server refused count as blocking, not as incomplete (as the summary's SLO figure reads). */
  arrivals: boolean;
  onAbort(abort: SloAbort): void;
}

/**
 * `--abort-on-fail`: watches the SLO terms that can be judged live, once a second from the start
 * gate, and calls `onAbort` once, with the first term that can no longer pass.
 */
export class SloWatch {
  private readonly terms: SloTerm[];
  private readonly ttfp: Histogram = createUsHistogram();
  private readonly ttft: Histogram = createUsHistogram();
  private readonly rtf: Histogram = createUsHistogram();
  private incomplete = 0;
  private steady_s = Infinity;
  private gate_s = 0;
  /** Since when each percentile term has failed without a break (s on the clock). */
  private readonly failingSince = new Map<string, number>();
  private ticks: Subscription | null = null;
  private ended: SloAbort | null = null;

  constructor(private readonly options: SloWatchOptions) {
    this.terms = options.terms.filter(judgedLive);
  }

  /** The first term that ended the run, if one did. */
  get abort(): SloAbort | null {
    return this.ended;
  }

  /** The session hooks that feed it: each session's end, each finished response. */
  hooks(): SessionHooks {
    return {
      onSessionEnd: (r) => {
        if (r.completed || r.reason === 'interrupted') return;
        if (this.options.arrivals && r.reason === 'admission_refused') return;
        this.incomplete++;
      },
      // TTFT and TTFP as soon as each is known (a response may last the whole session); RTF at its end.
      onFirstOutput: (figure, ms) => {
        if (this.options.clock.now_s() >= this.steady_s && ms >= 0) recordMs(figure === 'ttfp' ? this.ttfp : this.ttft, ms);
      },
      onResponse: (r) => {
        if (this.options.clock.now_s() >= this.steady_s && r.rtf !== null && r.rtf >= 0) recordMs(this.rtf, r.rtf * 1000);
      },
    };
  }

  /** Starts judging once a second: percentiles over what finishes from `steady_s` on. */
  start(gate_s: number, steady_s: number): void {
    if (this.terms.length === 0) return;
    this.gate_s = gate_s;
    this.steady_s = steady_s;
    this.ticks = every(timersOn(this.options.clock), 1000, { background: true }).subscribe(() => this.judge());
  }

  stop(): void {
    this.ticks?.unsubscribe();
    this.ticks = null;
  }

  /** One look at every live term; public so a test can step it. */
  judge(): void {
    if (this.ended) return;
    const now_s = this.options.clock.now_s();
    for (const t of this.terms) {
      const value = this.figure(t.figure);
      if (value === null) continue;
      if (OPS[t.op](value, t.bound)) {
        this.failingSince.delete(t.text);
        continue;
      }
      if (LIVE_SLO_FIGURES[t.figure] === 'count') return this.end(t, value, now_s, 'passed its bound, and a count only grows');
      const since = this.failingSince.get(t.text) ?? now_s;
      this.failingSince.set(t.text, since);
      if (now_s - since >= this.options.grace_s) return this.end(t, value, now_s, `over its bound for ${Math.round(now_s - since)} s of the steady window (--abort-grace-s ${this.options.grace_s})`);
    }
  }

  private end(t: SloTerm, value: number, now_s: number, how: string): void {
    this.ended = { term: t.text, value: Math.round(value * 1000) / 1000, at_s: Math.round((now_s - this.gate_s) * 1000) / 1000, how };
    this.stop();
    this.options.onAbort(this.ended);
  }

  private figure(name: string): number | null {
    if (name === 'incomplete') return this.incomplete;
    const h = name === 'ttfp_p99_ms' ? this.ttfp : name === 'ttft_p99_ms' ? this.ttft : this.rtf;
    if (h.totalCount === 0) return null;
    const p99 = percentilesMs(h).p99;
    if (p99 === null) return null;
    return name === 'rtf_p99' ? p99 / 1000 : p99;
  }
}

/** "ttfp_p99_ms<=100 (TTFP p99 812.3, over its bound for 10 s …) at 14.2 s": the line an early end prints. */
export function abortLine(a: SloAbort): string {
  const figure = SLO_FIGURES[/^[a-z0-9_]+/.exec(a.term)?.[0] ?? '']?.label ?? 'figure';
  return `${a.term} (${figure} ${a.value}, ${a.how}) at ${a.at_s} s after the start gate`;
}
