import { EmptyError, filter, firstValueFrom, map, race, type Subscription } from 'rxjs';
import { after, monotonicClock } from '@duplex-bench/pacer';
import {
  isKnownLegacyType,
  LEGACY_POST_CLOSE_MS,
  LegacyEvent,
  legacyAppend,
  legacyConfigure,
  legacyProbe,
  legacyResponseId,
  legacyTurnDetectionOf,
  openaiSessionRates,
  ProtocolError,
  serverError,
  type DecodedFrame,
} from '@duplex-bench/protocol';
import type { Connection, ReceivedEvent } from './connection';
import { TransportError } from './errors';
import { waitForEvent } from './wait-for';
import { FLOW_TIMEOUTS, sendTraced, type EndReport, type FlowOptions, type LegacyFlowConfig, type SessionFlow, type SessionGrant } from './flow';

/** The next event of `type`, or the server's `error` event as a ProtocolError: their client stops on any error. */
async function nextOrError(conn: Connection, type: string, timeout_ms: number, reason: 'handshake_timeout' | 'drain_timeout'): Promise<ReceivedEvent> {
  const e = await waitForEvent(conn, [type, LegacyEvent.error], timeout_ms, reason);
  if (e.frame.type === LegacyEvent.error) throw serverError(e.frame);
  return e;
}

/**
 * sglang-omni's legacy (turn-based) protocol as their client drives it (benchmarks/duplex/client.py
 * at 3d801fa0, the legacy path of `run_session`):
 *
 * - `session.created` → `session.update {modalities: ["text", "audio"], turn_detection: {type}}` →
 *   `session.updated`, whose `session.turn_detection.type` must echo the type asked for: the facade
 *   runs server_vad when no turn model is loaded, and the echo is the only evidence of which
 *   detector ran, so a different echo fails the session (their client raises, before any input);
 * - appends as the native dialect's (`sglang.seq`, `t_start_ms`), with no receipt and no commit:
 *   the server finds, commits and answers the turns;
 * - no end of input, drain or `session.close`: once the input has played out, a fixed tail (1 s)
 *   later, a no-op `session.update {}` goes as a liveness probe; its `session.updated` answers it;
 *   their client then reads for 0.2 s more (`POST_CLOSE_SECONDS`) and closes the socket.
 *
 * Any server `error` stops the session (their client sets `aborted` on every error, fatal or not):
 * no more input, no probe, and the socket is closed; the session is incomplete. Responses still
 * open at the close are not a fault. What the oracle reports of a legacy session is counted here:
 * responses created, those a `speech_started` overlapped (still open when the user spoke), those
 * open at the close, and the probe's answer time.
 */
export class LegacyFlow implements SessionFlow {
  readonly protocol = 'sglang-legacy';
  /** Responses created and not yet done. */
  private readonly open = new Set<string>();
  private created = 0;
  private readonly overlapped = new Set<string>();
  private probe_ack_ms: number | null = null;

  constructor(
    private readonly session_id: string,
    private readonly config: LegacyFlowConfig,
  ) {}

  attach(conn: Connection): Subscription {
    return conn.events$.subscribe({ next: (e) => this.observe(e.frame), error: () => undefined });
  }

  private observe(frame: DecodedFrame): void {
    switch (frame.type) {
      case LegacyEvent.responseCreated: {
        const id = legacyResponseId(frame.event());
        if (id === null) return;
        this.created++;
        this.open.add(id);
        return;
      }
      case LegacyEvent.responseDone: {
        const id = legacyResponseId(frame.event());
        if (id !== null) this.open.delete(id);
        return;
      }
      case LegacyEvent.speechStarted:
        // The oracle's `responses_overlapped_by_speech`: every response still open when the user speaks.
        for (const id of this.open) this.overlapped.add(id);
        return;
      default:
        return;
    }
  }

  isKnownType(type: string): boolean {
    return isKnownLegacyType(type);
  }

  async handshake(conn: Connection, _input_sample_rate: number, options: FlowOptions): Promise<SessionGrant> {
    const timeout_ms = options.handshake_timeout_ms ?? FLOW_TIMEOUTS.handshake_timeout_ms;
    try {
      const created = nextOrError(conn, LegacyEvent.sessionCreated, timeout_ms, 'handshake_timeout');
      // Promise.all holds both: an open that fails must not leave `created` rejecting unhandled.
      await Promise.all([conn.opened, created]);
      const updated = nextOrError(conn, LegacyEvent.sessionUpdated, timeout_ms, 'handshake_timeout');
      sendTraced(conn, legacyConfigure(`${this.session_id}_configure`, this.config.turn_detection), options);
      const event = (await updated).frame.event();
      const echoed = legacyTurnDetectionOf(event);
      if (echoed !== this.config.turn_detection) {
        throw new ProtocolError('UNEXPECTED_EVENT', `session.updated echoed turn_detection.type ${JSON.stringify(echoed)}, requested ${JSON.stringify(this.config.turn_detection)}`, {
          event_type: LegacyEvent.sessionUpdated,
        });
      }
      const output = openaiSessionRates((event.session ?? {}) as Record<string, unknown>).output;
      return output ? { output_sample_rate: output } : {};
    } catch (err) {
      if (err instanceof TransportError && err.reason === 'server_closed') {
        throw new TransportError('server_closed', `the server closed the session during the handshake (${err.message})`, err.info);
      }
      throw err;
    }
  }

  append(event_id: string, seq: number, t_start_ms: number, audio_b64: Uint8Array): Buffer {
    return legacyAppend(event_id, seq, t_start_ms, audio_b64);
  }

  afterAppend(): null {
    return null;
  }

  /** Their client stops on every server error, fatal or not. */
  endsOn(): boolean {
    return true;
  }

  /**
   * The tail (bounded by itself; an error during it ends the session with that error), the probe,
   * its `session.updated` (bounded by the drain bound), 0.2 s more of reading, then the close.
   */
  async end(conn: Connection, options: FlowOptions): Promise<EndReport> {
    const drain_ms = options.drain_timeout_ms ?? FLOW_TIMEOUTS.drain_timeout_ms;
    const close_ms = options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms;
    await this.tail(conn);
    const answered = nextOrError(conn, LegacyEvent.sessionUpdated, drain_ms, 'drain_timeout').catch((err: unknown) => {
      throw err instanceof TransportError && err.reason === 'drain_timeout' ? new TransportError('drain_timeout', `no session.updated answered the liveness probe within ${drain_ms} ms`, err.info) : err;
    });
    const sent_s = (options.clock ?? monotonicClock).now_s();
    sendTraced(conn, legacyProbe(`${this.session_id}_probe`), options);
    const answer = await answered;
    this.probe_ack_ms = (answer.received_s - sent_s) * 1000;
    await firstValueFrom(after(conn.timers, LEGACY_POST_CLOSE_MS), { defaultValue: undefined });
    await conn.close(close_ms);
    return {};
  }

  /** Waits the tail after the input; a server error meanwhile ends the session (their client sends no probe then). */
  private async tail(conn: Connection): Promise<void> {
    try {
      await firstValueFrom(
        race(
          after(conn.timers, this.config.tail_ms),
          conn.events$.pipe(
            filter((e) => e.frame.type === LegacyEvent.error),
            map((e): void => {
              throw serverError(e.frame);
            }),
          ),
        ),
      );
    } catch (err) {
      if (err instanceof EmptyError) throw new TransportError('server_closed', 'session closed before its liveness probe', { url: conn.url });
      throw err;
    }
  }

  /** Their client closes the socket after any failure, with nothing to say first. */
  closesOnFailure(): boolean {
    return false;
  }

  async abort(conn: Connection, _error: unknown, options: FlowOptions): Promise<void> {
    await conn.close(options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms);
  }

  /** What the oracle reports of a legacy session, as counted on the client's side; `probe_ack_ms` once the probe was answered. */
  dialectEvents(): Record<string, number> {
    return {
      responses_created: this.created,
      responses_overlapped_by_speech: this.overlapped.size,
      responses_open_at_close: this.open.size,
      ...(this.probe_ack_ms !== null ? { probe_ack_ms: this.probe_ack_ms } : {}),
    };
  }

  serverEventSeq(): null {
    return null;
  }
}
