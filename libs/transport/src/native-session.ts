import type { Subscription } from 'rxjs';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';
import {
  isKnownNativeType,
  NativeEvent,
  nativeAppend,
  nativeInputEnd,
  nativeSessionClose,
  nativeSessionUpdate,
  serverError,
  type NativeSessionRequest,
} from '@duplex-bench/protocol';
import type { WsConnection } from './connection';
import { waitForEvent } from './wait-for';
import type { EndReport, FlowOptions, SessionFlow, SessionGrant } from './session-flow';

/** Called with each control frame the flow sends and the time it went, so it can be traced. */
export type SentHook = (frame: string, sent_s: number) => void;

export interface NativeFlowOptions {
  clock?: Clock;
  onSend?: SentHook;
  handshake_timeout_ms?: number;
  drain_timeout_ms?: number;
  close_timeout_ms?: number;
}

const DEFAULT_TIMEOUTS = { handshake_timeout_ms: 10_000, drain_timeout_ms: 30_000, close_timeout_ms: 5_000 };

function sendTraced(conn: WsConnection, frame: string, options: NativeFlowOptions): void {
  const sent_s = (options.clock ?? monotonicClock).now_s();
  conn.send(frame);
  options.onSend?.(frame, sent_s);
}

/**
 * Ends the session on a fatal server `error` event; non-fatal ones are left to the caller to count.
 * Subscribe before the handshake so an error during it is seen.
 */
export function failOnFatalServerError(conn: WsConnection): Subscription {
  return conn.events$.subscribe({
    next: (e) => {
      if (e.frame.type !== NativeEvent.error) return;
      const error = serverError(e.frame);
      if (error.info.fatal) conn.fail(error);
    },
    error: () => undefined,
  });
}

/** `session.created` → `session.update` → `session.updated`; resolves with the granted capabilities. */
export async function nativeHandshake(
  conn: WsConnection,
  event_id: string,
  request: NativeSessionRequest,
  options: NativeFlowOptions = {},
): Promise<Record<string, unknown>> {
  const timeout_ms = options.handshake_timeout_ms ?? DEFAULT_TIMEOUTS.handshake_timeout_ms;
  const created = waitForEvent(conn, NativeEvent.sessionCreated, timeout_ms, 'handshake_timeout');
  // Promise.all holds both: an open that fails must not leave `created` rejecting unhandled.
  await Promise.all([conn.opened, created]);
  const updated = waitForEvent(conn, NativeEvent.sessionUpdated, timeout_ms, 'handshake_timeout');
  sendTraced(conn, nativeSessionUpdate(event_id, request), options);
  const event = (await updated).frame.event();
  const session = (event.session ?? {}) as Record<string, unknown>;
  const sglang = (session.sglang ?? {}) as Record<string, unknown>;
  return (sglang.granted ?? {}) as Record<string, unknown>;
}

export interface NativeDrainReport {
  accepted_end_ms?: number;
  consumed_ms?: number;
  discarded_ms?: number;
  padding_ms?: number;
}

/**
 * `sglang.input_audio.end` … `sglang.input_audio.drained`, then `session.close` → `session.closed`,
 * then the socket closes. Every step is bounded.
 */
export async function nativeEndSession(
  conn: WsConnection,
  ids: { end: string; close: string },
  options: NativeFlowOptions = {},
): Promise<NativeDrainReport> {
  const drain_ms = options.drain_timeout_ms ?? DEFAULT_TIMEOUTS.drain_timeout_ms;
  const close_ms = options.close_timeout_ms ?? DEFAULT_TIMEOUTS.close_timeout_ms;
  const drained = waitForEvent(conn, NativeEvent.drained, drain_ms, 'drain_timeout');
  sendTraced(conn, nativeInputEnd(ids.end), options);
  const event = (await drained).frame.event();
  const closed = waitForEvent(conn, NativeEvent.sessionClosed, close_ms, 'close_timeout');
  sendTraced(conn, nativeSessionClose(ids.close), options);
  await closed;
  await conn.close(close_ms);
  const pick = (k: string) => (typeof event[k] === 'number' ? (event[k] as number) : undefined);
  return {
    accepted_end_ms: pick('accepted_end_ms'),
    consumed_ms: pick('consumed_ms'),
    discarded_ms: pick('discarded_ms'),
    padding_ms: pick('padding_ms'),
  };
}

/** The native dialect as a session flow (sglang-omni duplex). */
export class NativeFlow implements SessionFlow {
  readonly protocol = 'native';

  constructor(private readonly session_id: string) {}

  attach(conn: WsConnection): Subscription {
    return failOnFatalServerError(conn);
  }

  isKnownType(type: string): boolean {
    return isKnownNativeType(type);
  }

  async handshake(conn: WsConnection, input_sample_rate: number, options: FlowOptions): Promise<SessionGrant> {
    const grant = await nativeHandshake(conn, `${this.session_id}_update`, { input_sample_rate }, options);
    const rate = (grant.output_audio_format as { sample_rate?: unknown } | undefined)?.sample_rate;
    return typeof rate === 'number' && rate > 0 ? { output_sample_rate: rate } : {};
  }

  append(event_id: string, seq: number, t_start_ms: number, audio_b64: string): string {
    return nativeAppend(event_id, seq, t_start_ms, audio_b64);
  }

  afterAppend(): null {
    return null;
  }

  async end(conn: WsConnection, options: FlowOptions): Promise<EndReport> {
    return { drain: await nativeEndSession(conn, { end: `${this.session_id}_end`, close: `${this.session_id}_close` }, options) };
  }

  serverEventSeq(): null {
    return null;
  }
}
