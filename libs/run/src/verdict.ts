import type { SummaryVerdict } from '@duplex-bench/results';
/**
 * How a run ended, as a script reads it: the summary's `verdict` field and the first word of the
 * last human line. `qualified` keeps its own meaning (the client kept its cadence); a run can be
 * pacing-qualified and still have measured nothing, and that run is `failed` (issue 26). The
 * apps map a verdict to an exit status (apps/probe `exitOf`).
 */
export type Verdict = SummaryVerdict;

export interface VerdictInput {
  qualified: boolean;
  interrupted: boolean;
  /** What the run drove: sessions (run, record, merge) or requests (http). */
  unit: 'session' | 'request';
  completed: number;
  /** What ended the others, by reason: a summary's `incomplete_reasons`, or an http run's error classes. */
  reasons: Record<string, number | undefined>;
  /** A failure of the run itself, whatever its sessions did: a trace writer that failed, a process that died. */
  failure?: string | null;
}

export interface RunVerdict {
  verdict: Verdict;
  /** With `failed`: why, in words. */
  reason: string | null;
}

/** The verdict of a finished run. Pure: a failure of the run, then an interruption, then nothing completed, then pacing. */
export function verdictOf(i: VerdictInput): RunVerdict {
  if (i.failure) return { verdict: 'failed', reason: i.failure };
  if (i.interrupted) return { verdict: 'interrupted', reason: null };
  if (i.completed === 0) {
    const why = Object.entries(i.reasons)
      .filter(([, n]) => n)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    return { verdict: 'failed', reason: `no ${i.unit} completed${why ? ` (${why})` : ''}` };
  }
  return { verdict: i.qualified ? 'qualified' : 'unqualified', reason: null };
}

/**
 * The last human line: the verdict in capitals, then what it means for this command (`says`), or
 * for `failed` the reason. `FAILED: no session completed (4 admission_refused)`.
 */
export function verdictLine(v: RunVerdict, says: Record<Exclude<Verdict, 'failed'>, string>): string {
  return `${v.verdict.toUpperCase()}: ${v.verdict === 'failed' ? v.reason : says[v.verdict]}`;
}

/** The summary as written and emitted: `verdict` beside `qualified`. */
export function withVerdict<T extends { qualified: boolean }>(summary: T, v: RunVerdict): T & { verdict: Verdict; failed_reason?: string } {
  const verdict = { verdict: v.verdict, ...(v.reason ? { failed_reason: v.reason } : {}) };
  // Placed after `qualified`, and over any verdict the summary was read back with.
  return Object.assign({ qualified: summary.qualified }, verdict, summary, verdict);
}
