import type { Subscription } from 'rxjs';
import { isKnownNativeType, NativeEvent, nativeAppend, nativeImageAppend, nativeInputEnd, nativeSessionClose, nativeSessionUpdate, NativeReceiptSeq, readNativeGrant, serverError, ProtocolError, type NativeGrantFigures } from '@duplex-bench/protocol';
import { FrameTimes, framePeriodMs } from './camera';
import type { Connection, ReceivedEvent } from './connection';
import { TransportError } from './errors';
import { waitForEvent } from './wait-for';
import { FLOW_TIMEOUTS, sendTraced, type CameraFrames, type EndReport, type FlowOptions, type NativeDrainReport, type SessionFlow, type SessionGrant } from './flow';

/**
 * The next event of `type`, or the server's `error` event as a ProtocolError: a native client
 * stops waiting on any error (sglang-omni's own client does).
 */
async function nextOrError(conn: Connection, type: string, timeout_ms: number, reason: 'handshake_timeout' | 'drain_timeout'): Promise<ReceivedEvent> {
  const e = await waitForEvent(conn, [type, NativeEvent.error], timeout_ms, reason);
  if (e.frame.type === NativeEvent.error) throw serverError(e.frame);
  return e;
}

/**
 * `session.created` → `session.update` (only `output_modalities: ["audio"]`) → `session.updated`;
 * resolves with the `session.updated` event. An error event or a close on the way ends it.
 */
export async function nativeHandshake(conn: Connection, event_id: string, options: FlowOptions = {}): Promise<Record<string, unknown>> {
  const timeout_ms = options.handshake_timeout_ms ?? FLOW_TIMEOUTS.handshake_timeout_ms;
  try {
    const created = nextOrError(conn, NativeEvent.sessionCreated, timeout_ms, 'handshake_timeout');
    // Promise.all holds both: an open that fails must not leave `created` rejecting unhandled.
    await Promise.all([conn.opened, created]);
    const updated = nextOrError(conn, NativeEvent.sessionUpdated, timeout_ms, 'handshake_timeout');
    sendTraced(conn, nativeSessionUpdate(event_id), options);
    return (await updated).frame.event();
  } catch (err) {
    if (err instanceof TransportError && err.reason === 'server_closed') {
      throw new TransportError('server_closed', `the server closed the session during the handshake (${err.message})`, err.info);
    }
    throw err;
  }
}

/** Waits (bounded) for `session.closed`, then closes the socket with a close frame (bounded). */
async function awaitSessionClosed(conn: Connection, close_ms: number): Promise<void> {
  await waitForEvent(conn, NativeEvent.sessionClosed, close_ms, 'close_timeout');
  await conn.close(close_ms);
}

/**
 * `sglang.input_audio.end` … `sglang.input_audio.drained`, then `session.close` → `session.closed`,
 * then the socket closes. Every step is bounded; an error event before `drained` ends it.
 */
export async function nativeEndSession(conn: Connection, ids: { end: string; close: string }, options: FlowOptions = {}): Promise<NativeDrainReport> {
  const drain_ms = options.drain_timeout_ms ?? FLOW_TIMEOUTS.drain_timeout_ms;
  const close_ms = options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms;
  const drained = nextOrError(conn, NativeEvent.drained, drain_ms, 'drain_timeout');
  sendTraced(conn, nativeInputEnd(ids.end), options);
  const event = (await drained).frame.event();
  const closed = awaitSessionClosed(conn, close_ms);
  sendTraced(conn, nativeSessionClose(ids.close), options);
  await closed;
  const pick = (k: string) => (typeof event[k] === 'number' ? (event[k] as number) : undefined);
  return {
    accepted_end_ms: pick('accepted_end_ms'),
    consumed_ms: pick('consumed_ms'),
    discarded_ms: pick('discarded_ms'),
    padding_ms: pick('padding_ms'),
  };
}

/**
 * How a session sends `video`'s frames under `grant`, or why it cannot: the grant must list image
 * input, and the frames per unit and the largest frame must be within its `input_image_format`.
 * Checked at the handshake, before any packet: a run whose frames the server cannot take does not start.
 */
export function nativeFramePlan(video: CameraFrames, grant: NativeGrantFigures): { unit_ms: number; times: FrameTimes } {
  const unit_ms = grant.native_unit_ms;
  if (!unit_ms) throw new TransportError('input_not_granted', '--video: the grant states no native_unit_ms, so frames have no unit to go with');
  if (!grant.input_modalities?.includes('image')) {
    throw new TransportError('input_not_granted', `--video: the server grants no image input (input_modalities: ${JSON.stringify(grant.input_modalities ?? null)})`);
  }
  const times = new FrameTimes(video, framePeriodMs(video, unit_ms));
  const per_unit = Math.ceil(unit_ms / times.period_ms - 1e-9);
  const max_per_unit = grant.image_limits?.max_per_unit;
  if (max_per_unit !== undefined && per_unit > max_per_unit) {
    throw new TransportError('input_not_granted', `--video-fps ${video.fps}: ${per_unit} frames per ${unit_ms} ms unit; the server takes at most ${max_per_unit}`);
  }
  const max_bytes = grant.image_limits?.max_bytes;
  if (max_bytes !== undefined && times.largest() > max_bytes) {
    throw new TransportError('input_not_granted', `--video: a frame of ${times.largest()} bytes; the server takes at most ${max_bytes} (input_image_format.max_bytes)`);
  }
  return { unit_ms, times };
}

/** The native dialect as a session flow (sglang-omni duplex). */
export class NativeFlow implements SessionFlow {
  readonly protocol = 'native';
  private conn: Connection | null = null;
  /** With camera frames: their schedule, once the grant allowed them. */
  private camera: { unit_ms: number; times: FrameTimes; unit: number } | null = null;
  /** The receipts' seq against the appends' order: a repeated or skipped one is the server's fault, counted (their client goes on). */
  private readonly receipts = new NativeReceiptSeq();

  constructor(
    private readonly session_id: string,
    private readonly video?: CameraFrames,
  ) {}

  /** Error events end the session through `endsOn`; the connection is kept for the camera's frames, and each receipt's seq checked. */
  attach(conn: Connection): Subscription {
    this.conn = conn;
    const receipts = this.receipts;
    return conn.events$.subscribe({ next: (e) => e.frame.type === NativeEvent.accepted && receipts.add(e.frame), error: () => undefined });
  }

  isKnownType(type: string): boolean {
    return isKnownNativeType(type);
  }

  async handshake(conn: Connection, _input_sample_rate: number, options: FlowOptions): Promise<SessionGrant> {
    const updated = await nativeHandshake(conn, `${this.session_id}_update`, options);
    const grant = readNativeGrant(updated);
    if (this.video) this.camera = { ...nativeFramePlan(this.video, grant), unit: -1 };
    return { ...(grant.output_sample_rate ? { output_sample_rate: grant.output_sample_rate } : {}), ...(grant.native_unit_ms ? { native_unit_ms: grant.native_unit_ms } : {}) };
  }

  /** The append of packet `seq`; the first packet of a unit goes after that unit's camera frames, as their clients send them. */
  append(event_id: string, seq: number, t_start_ms: number, audio_b64: Uint8Array): Buffer {
    const camera = this.camera;
    if (camera && this.conn) {
      const unit = Math.floor(t_start_ms / camera.unit_ms + 1e-9);
      if (unit > camera.unit) {
        camera.unit = unit;
        const due = camera.times.upTo((unit + 1) * camera.unit_ms);
        // Sent, counted, and not traced: a trace holds what sglang-omni's oracle grades (their frame hook leaves frames out too).
        for (let j = 0; j < due.length; j++) this.conn.send(nativeImageAppend(`${event_id}_i${j}`, due[j].image, due[j].t_ms));
      }
    }
    return nativeAppend(event_id, seq, t_start_ms, audio_b64);
  }

  afterAppend(): null {
    return null;
  }

  /** sglang-omni's client stops streaming on any server error, fatal or not. */
  endsOn(): boolean {
    return true;
  }

  async end(conn: Connection, options: FlowOptions): Promise<EndReport> {
    return { drain: await nativeEndSession(conn, { end: `${this.session_id}_end`, close: `${this.session_id}_close` }, options) };
  }

  /**
   * After a server error: a fatal one means the server is ending the session, so the client sends
   * nothing more; after any other it asks to close. Either way it waits (bounded) for
   * `session.closed` and closes the socket with a close frame, never dropping it while the server
   * may still answer (a closing session can hold the server's only admission slot). Server errors
   * end a session only before `drained`, so `session.close` has not been sent yet.
   */
  async abort(conn: Connection, error: unknown, options: FlowOptions): Promise<void> {
    const close_ms = options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms;
    const closed = awaitSessionClosed(conn, close_ms);
    if (!(error instanceof ProtocolError && error.info.fatal)) sendTraced(conn, nativeSessionClose(`${this.session_id}_close`), options);
    await closed;
  }

  /** A server error ends the session through `abort`; other failures close the socket (bounded). */
  closesOnFailure(error: unknown): boolean {
    return error instanceof ProtocolError && error.code === 'SERVER_ERROR';
  }

  /** With camera frames: how many went, and their JPEG bytes; receipts that repeated or skipped a seq, when any did. */
  dialectEvents(): Record<string, number> | null {
    const { repeated, skipped } = this.receipts;
    const receipts = repeated + skipped > 0 ? { receipt_seq_repeated: repeated, receipt_seq_skipped: skipped } : null;
    const camera = this.camera ? { frames_sent: this.camera.times.sent, frame_bytes: this.camera.times.bytes } : null;
    return camera || receipts ? { ...camera, ...receipts } : null;
  }

  serverEventSeq(): null {
    return null;
  }
}
