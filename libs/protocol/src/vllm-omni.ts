import { mentions, type DecodedFrame } from './frame';

/**
 * vLLM-Omni's extensions of the OpenAI dialect (`/v1/realtime`). Each is read when present and
 * ignored when not, so a plain OpenAI-style server is measured the same way.
 */

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** `session.created.session.capabilities.chunk_period_ms` (or `capabilities` beside `session`): the server's input unit. */
export function chunkPeriodMs(sessionCreated: Record<string, unknown>): number | undefined {
  const capabilities = record(record(sessionCreated.session)?.capabilities) ?? record(sessionCreated.capabilities);
  const value = capabilities?.chunk_period_ms;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

const SEQ_KEY = '"server_event_seq":';

/**
 * `server_event_seq` of a frame, read from its text without parsing it (audio deltas are large):
 * the key is looked for near the frame's ends (`mentions`).
 */
export function serverEventSeq(frame: DecodedFrame): number | undefined {
  if (!mentions(frame, SEQ_KEY)) return undefined;
  const text = frame.text;
  const at = text.lastIndexOf(SEQ_KEY);
  if (at < 0) return undefined;
  let i = at + SEQ_KEY.length;
  while (text.charCodeAt(i) === 0x20) i++;
  let value = 0;
  let digits = 0;
  for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i)) {
    value = value * 10 + (c - 0x30);
    digits++;
  }
  return digits > 0 ? value : undefined;
}

/** Per-response timing a server measured itself, from its own request start. */
export interface ServerRequestMetrics {
  ttft_ms?: number;
  ttfp_ms?: number;
  /** What the server says its figures run from and to, when it says. */
  measurement_origin?: Record<string, string>;
  source?: string;
}

const METRICS_KEY = '"response_request_metrics"';

/**
 * `response_request_metrics` of an event: under `metadata.vllm_omni` (deltas), under
 * `response.metadata.duplex_event` or at the top (response.created). Frames that do not mention
 * the key near their ends are not parsed.
 */
export function responseRequestMetrics(frame: DecodedFrame): ServerRequestMetrics | undefined {
  if (!mentions(frame, METRICS_KEY)) return undefined;
  const event = frame.event();
  const metadata = record(event.metadata);
  const response = record(event.response);
  const raw =
    record(record(metadata?.vllm_omni)?.response_request_metrics) ??
    record(record(record(response?.metadata)?.duplex_event)?.response_request_metrics) ??
    record(response?.response_request_metrics) ??
    record(event.response_request_metrics);
  if (!raw) return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const origin = record(raw.measurement_origin);
  const out: ServerRequestMetrics = { ttft_ms: num(raw.ttft_ms), ttfp_ms: num(raw.ttfp_ms) };
  if (origin) out.measurement_origin = Object.fromEntries(Object.entries(origin).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  if (typeof raw.source === 'string') out.source = raw.source;
  return out.ttft_ms === undefined && out.ttfp_ms === undefined ? undefined : out;
}

/**
 * Counts gaps in a session's `server_event_seq`: a number more than one above the last one means
 * events were lost or never sent. Numbers that do not rise are counted apart.
 */
export class ServerEventSeqTracker {
  private last: number | undefined;
  /** Frames that carried a number. */
  seen = 0;
  gaps = 0;
  missing_events = 0;
  not_rising = 0;

  add(seq: number | undefined): void {
    if (seq === undefined) return;
    this.seen++;
    if (this.last !== undefined) {
      if (seq > this.last + 1) {
        this.gaps++;
        this.missing_events += seq - this.last - 1;
      } else if (seq <= this.last) this.not_rising++;
    }
    if (this.last === undefined || seq > this.last) this.last = seq;
  }
}
