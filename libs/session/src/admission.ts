import type { Clock, TimerHost } from '@duplex-bench/pacer';
import { ProtocolError, VLLM_CAPACITY_CODE } from '@duplex-bench/protocol';
import { TransportError } from '@duplex-bench/transport';
import type { AdmissionRefusal, SessionTraceSink } from '@duplex-bench/tracer';

/** How a session waits for a slot on a full server: `retries` more attempts, `backoff_ms` doubling up to `max_backoff_ms`. */
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

/** The refusal of a full server, when `err` is one: HTTP 503 at the upgrade, or vLLM-Omni's `resource_exhausted` error. */
export function admissionRefusal(err: unknown): AdmissionRefusal | null {
  if (err instanceof TransportError && (err.reason === 'connect_failed' || err.reason === 'admission_refused') && err.info.status === 503) return { http_status: 503 };
  if (err instanceof ProtocolError && err.info.server_code === VLLM_CAPACITY_CODE) return { code: VLLM_CAPACITY_CODE };
  return null;
}

export interface Admission {
  policy: AdmissionPolicy;
  url: string;
  session_id: string;
  sink: Pick<SessionTraceSink, 'admission'>;
  clock: Clock;
  /** The timers the backoff runs on. */
  timers: () => TimerHost;
  /** Told of each refusal (its attempt, from 1), before the next attempt or the failure. */
  onRefused(attempt: number): void;
  /** Forgets what a refused attempt left behind, before the next. */
  reset(): void;
}

/**
 * The one place a full server's refusal is retried: `attempt` until it succeeds; a refusal (HTTP
 * 503, `resource_exhausted`) is an admission record, each one, and another attempt after a
 * backoff, up to the policy's retries; then the session fails as `admission_refused`. Any other
 * failure is the caller's.
 */
export async function admitted(attempt: () => Promise<void>, a: Admission): Promise<void> {
  for (let n = 1; ; n++) {
    try {
      await attempt();
      return;
    } catch (err) {
      const refusal = admissionRefusal(err);
      if (!refusal) throw err;
      a.onRefused(n);
      a.sink.admission(n, refusal, a.clock.now_s());
      const said = refusal.http_status ? `HTTP ${refusal.http_status}` : `${refusal.code}`;
      if (n > a.policy.retries) {
        throw new TransportError('admission_refused', `server refused the session with ${said} ${n} times`, { url: a.url, session_id: a.session_id, attempts: n, status: refusal.http_status, server_code: refusal.code });
      }
      a.reset();
      await new Promise<void>((resolve) => a.timers().arm(admissionBackoffMs(a.policy, n), resolve));
    }
  }
}
