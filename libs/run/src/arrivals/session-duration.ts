import { exponential, lognormal } from '@duplex-bench/pacer';
import { RunInputError } from '../input-error';

/**
 * How long each arriving session streams (`--session-duration`). `conversation`: one pass through
 * the `--conversation` script, as long as its listens take; `bound_s` is the longest that pass can
 * be (every listen to its max_s), the length the schedule gives each session.
 */
export type SessionDuration =
  | { kind: 'fixed'; s: number }
  | { kind: 'exp'; mean_s: number }
  | { kind: 'lognormal'; mean_s: number; cov: number }
  | { kind: 'conversation'; bound_s: number };

/**
 * The shortest session: one millisecond of input (16 samples at 16 kHz), so an exponential draw
 * near 0 still streams one (short) packet. It moves the mean of `exp:2` by under 1 µs.
 */
export const MIN_SESSION_S = 0.001;

const positive = (text: string, what: string): number => {
  const v = Number(text);
  if (!(text.trim() !== '' && Number.isFinite(v) && v > 0)) throw new RunInputError('BAD_SESSION_DURATION', `--session-duration: ${what} must be a positive number of seconds, got "${text}"`);
  return v;
};

/** The spec that asks for a conversation's own length. */
export const CONVERSATION_LENGTH = 'conversation';

/**
 * `fixed:S`, `exp:MEAN` or `lognormal:MEAN,COV` (seconds), or `conversation` (its bound_s NaN until
 * the script is read: `conversationLength`). Throws RunInputError.
 */
export function parseSessionDuration(text: string): SessionDuration {
  if (text === CONVERSATION_LENGTH) return { kind: 'conversation', bound_s: NaN };
  const [kind, rest = ''] = text.split(':', 2);
  if (kind === 'fixed') return { kind, s: positive(rest, 'S') };
  if (kind === 'exp') return { kind, mean_s: positive(rest, 'MEAN') };
  if (kind === 'lognormal') {
    const [mean, cov, extra] = rest.split(',');
    if (cov === undefined || extra !== undefined) throw new RunInputError('BAD_SESSION_DURATION', `--session-duration: lognormal takes MEAN,COV, got "${text}"`);
    const c = Number(cov);
    if (!(cov.trim() !== '' && Number.isFinite(c) && c >= 0)) throw new RunInputError('BAD_SESSION_DURATION', `--session-duration: COV must be a number >= 0, got "${cov}"`);
    return { kind, mean_s: positive(mean, 'MEAN'), cov: c };
  }
  throw new RunInputError('BAD_SESSION_DURATION', `--session-duration must be fixed:S, exp:MEAN, lognormal:MEAN,COV or ${CONVERSATION_LENGTH}, got "${text}"`);
}

/**
 * The distribution's stated mean, seconds: what offered load is computed from. A conversation's
 * length is known only once its sessions ran: null (the summary takes the measured mean).
 */
export function meanDurationS(d: SessionDuration): number | null {
  return d.kind === 'fixed' ? d.s : d.kind === 'conversation' ? null : d.mean_s;
}

/** The spec as given back (`exp:2`), for run.json and the summary. */
export function describeDuration(d: SessionDuration): string {
  if (d.kind === 'conversation') return CONVERSATION_LENGTH;
  return d.kind === 'fixed' ? `fixed:${d.s}` : d.kind === 'exp' ? `exp:${d.mean_s}` : `lognormal:${d.mean_s},${d.cov}`;
}

/** One session's duration, seconds, never below MIN_SESSION_S; a conversation's, its bound. */
export function drawDurationS(d: SessionDuration, random: () => number): number {
  if (d.kind === 'conversation') return d.bound_s;
  const s = d.kind === 'fixed' ? d.s : d.kind === 'exp' ? exponential(random, d.mean_s) : lognormal(random, d.mean_s, d.cov);
  return Math.max(MIN_SESSION_S, s);
}
