import type { TimerHost } from '@duplex-bench/pacer';
import { ProtocolError, VLLM_CAPACITY_CODE } from '@duplex-bench/protocol';
import { TransportError } from './errors';

/** How a client waits for a slot on a full server: `retries` more attempts, `backoff_ms` doubling up to `max_backoff_ms`. */
export interface AdmissionPolicy {
  retries: number;
  backoff_ms: number;
  max_backoff_ms: number;
}

/** sglang-omni's client: 3 retries 0.25 s apart. */
export const NATIVE_ADMISSION: AdmissionPolicy = { retries: 3, backoff_ms: 250, max_backoff_ms: 250 };

/** The wait before retry `attempt` (from 1). */
export function admissionBackoffMs(policy: AdmissionPolicy, attempt: number): number {
  return Math.min(policy.max_backoff_ms, policy.backoff_ms * 2 ** (attempt - 1));
}

/** A full server's refusal: HTTP 503 at the upgrade, or vLLM-Omni's `resource_exhausted` error. */
export interface AdmissionRefusal {
  http_status?: number;
  code?: string;
}

/** The refusal of a full server, when `err` is one. */
export function admissionRefusal(err: unknown): AdmissionRefusal | null {
  if (err instanceof TransportError && (err.reason === 'connect_failed' || err.reason === 'admission_refused') && err.info.status === 503) return { http_status: 503 };
  if (err instanceof ProtocolError && err.info.server_code === VLLM_CAPACITY_CODE) return { code: VLLM_CAPACITY_CODE };
  return null;
}

export interface Admission {
  policy: AdmissionPolicy;
  url: string;
  session_id?: string;
  /** The timers the backoff runs on (asked after each refusal: an attempt may bring its own). */
  timers: () => TimerHost;
  /**
   * Told of each refusal (its attempt, from 1), before the next attempt or the failure;
   * `retried`: another attempt follows (false for the refusal that spends the retries).
   */
  onRefused?(attempt: number, refusal: AdmissionRefusal, retried: boolean): void;
  /** Forgets what a refused attempt left behind, before the next. */
  reset?(): void;
}

/**
 * The one place a full server's refusal is retried (sessions, and the look at a server's greeting
 * before a run): `attempt` until it succeeds; a refusal (HTTP 503, `resource_exhausted`) is told
 * and followed by another attempt after a backoff, up to the policy's retries; then it fails as
 * `admission_refused`. Any other failure is the caller's.
 */
export async function admitted<T>(attempt: () => Promise<T>, a: Admission): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      const refusal = admissionRefusal(err);
      if (!refusal) throw err;
      a.onRefused?.(n, refusal, n <= a.policy.retries);
      const said = refusal.http_status ? `HTTP ${refusal.http_status}` : `${refusal.code}`;
      if (n > a.policy.retries) {
        throw new TransportError('admission_refused', `server refused the session with ${said} ${n} times`, { url: a.url, session_id: a.session_id, attempts: n, status: refusal.http_status, server_code: refusal.code });
      }
      a.reset?.();
      await new Promise<void>((resolve) => a.timers().arm(admissionBackoffMs(a.policy, n), resolve));
    }
  }
}
