import { BehaviorSubject } from 'rxjs';
import { pcm16BytesPerMs } from '@duplex-bench/audio';
import { TransportError, WsConnection, type FlowOptions } from '@duplex-bench/transport';
import { receivePath } from './receive-path';
import type { SessionBook } from './session-book';

/** The options every flow call of the session takes: its clock, its trace of control frames, its bounds. */
export function flowOptions(b: SessionBook): FlowOptions {
  const { ctx, sink } = b;
  return {
    clock: ctx.clock,
    onSend: (frame: string, sent_s: number) => sink.sent(frame, sent_s),
    handshake_timeout_ms: ctx.handshake_timeout_ms ?? ctx.connect_timeout_ms,
    drain_timeout_ms: ctx.drain_timeout_ms,
    ...(ctx.close_timeout_ms !== undefined ? { close_timeout_ms: ctx.close_timeout_ms } : {}),
  };
}

/**
 * One attempt to open the session: connect, read every frame from the first one (the receive path,
 * and the flow's own), shake hands in the dialect's way, and take the grant. Rejects with what
 * stopped it (a refusal is the admission's to retry).
 */
export async function openAttempt(b: SessionBook): Promise<void> {
  const { ctx } = b;
  const conn = (ctx.connect ?? WsConnection.open)(ctx.url, { clock: ctx.clock, ...(ctx.timers ? { timers: ctx.timers } : {}), connect_timeout_ms: ctx.connect_timeout_ms, session_id: b.id, headers: ctx.headers, max_frame_bytes: ctx.max_frame_bytes, max_send_buffer_bytes: ctx.max_send_buffer_bytes, ...(ctx.on_sent_stamp ? { on_sent_stamp: ctx.on_sent_stamp } : {}) });
  b.conn = conn;
  b.opening.connected_s = b.opening.handshake_s = null;
  conn.opened.then(
    () => (b.opening.connected_s = ctx.clock.now_s()),
    () => undefined, // a failed open is the handshake's error, raised below
  );
  if (b.conversation) b.voice ??= ctx.voice?.(b.id) ?? null;
  const player = b.conversation;
  b.reading = [
    receivePath({
      conn,
      sink: b.sink,
      unknownEvents: ctx.unknownEvents,
      flow: () => b.flow,
      responsesStarted: () => b.responses !== null,
      audible: { wants: (id) => b.responses?.wantsVoice(id) ?? false, output_rate: () => b.grant.output_sample_rate },
      onResponse: (r) => {
        b.responses?.add(r);
        if (r.kind === 'response_done') player?.responseEnded(r.t_s, r.status);
        else if (r.kind === 'response_created') player?.responseStarted(r.t_s);
      },
      onUnitDone: (received_s) => {
        if (!b.units) return;
        b.units.unitDone(received_s);
        b.unitsDone$?.next(b.units.done);
      },
      // The dialect says which errors stop the session (native: any; the others: none).
      onServerError: (error) => b.errors.add(error, !b.errors.stoppedBy && b.flow.endsOn(error)),
      hear: player ? { playout: player.playout, voice: b.voice, output_rate: () => b.grant.output_sample_rate } : null,
      onBroken: (err) => (b.broken = err),
    }),
    b.flow.attach(conn),
  ];
  const grant = await b.flow.handshake(conn, b.packets.sample_rate, flowOptions(b));
  b.opening.handshake_s = ctx.clock.now_s();
  // The server's grant decides the output rate; a rate the user gave overrides it (the run warns when they differ).
  if (grant.output_sample_rate && !ctx.output_sample_rate_given) b.grant.output_sample_rate = grant.output_sample_rate;
  b.grant.chunk_period_ms = grant.chunk_period_ms;
  b.grant.native_unit_ms = grant.native_unit_ms;
  ctx.onGrant?.(grant);
  if (grant.native_unit_ms && ctx.units) {
    b.units = ctx.units.session(grant.native_unit_ms, b.packets.total_bytes / pcm16BytesPerMs(b.packets.sample_rate));
    if (ctx.lockstep) b.unitsDone$ = new BehaviorSubject(0);
  } else if (ctx.lockstep) {
    throw new TransportError('server_error', 'lockstep pacing needs the native_unit_ms of the grant; the server granted none');
  }
}
