import { map, type OperatorFunction } from 'rxjs';
import { monotonicClock, type Clock, type Tick } from '@duplex-bench/pacer';
import { frameSent } from '@duplex-bench/protocol';
import type { Connection } from './connection';
import type { SessionFlow } from './flow';

/** A frame due on the socket, with the times the pacing check needs. */
export interface OutgoingFrame {
  seq: number;
  event_id: string;
  frame: string | Buffer;
  /** When it was due: origin + seq × packet. */
  scheduled_s: number;
  /** Send start: when the client was ready to send, before serialization. */
  start_s: number;
}

/** What happened to one sent frame. Times are seconds on the monotonic clock. */
export interface SendReceipt {
  seq: number;
  event_id: string;
  scheduled_s: number;
  start_s: number;
  /** When `ws.send()` returned. */
  completed_s: number;
  /** Duration of the `ws.send()` call itself, in ms: back-pressure shows here. */
  send_ms: number;
  /** Socket `bufferedAmount` right after the send, in bytes. */
  buffered_bytes: number;
  /** The frame sent; an append's bytes are written over by the next append once the kernel took them. */
  frame: string | Buffer;
  /**
   * Whether the packet was late against its session's schedule: false as sent, set by whoever
   * measures it (the pacing record). Made with the receipt, so marking it later adds no property.
   */
  late: boolean;
}

/** Sends each frame on `conn` as it comes and emits its receipt. */
export function sendOn(conn: Connection, clock: Clock = monotonicClock): OperatorFunction<OutgoingFrame, SendReceipt> {
  return map((out) => sendWithReceipt(conn, clock, out.seq, out.event_id, out.frame, out.scheduled_s, out.start_s));
}

/** Where appends come from: each packet's audio as base64 bytes (`PacketSource` of @duplex-bench/audio). */
export interface AppendAudio {
  readonly packet_ms: number;
  packetBase64(seq: number): Buffer;
}

/**
 * The paced send, tick to receipt in one step: each tick's packet as the dialect's append (event id
 * `<prefix><seq>`), sent at once, and its receipt with the tick's due and fire times. The send
 * start is the tick's fire time, before the frame is built, as the pacing check measures it.
 */
export function sendAppends(
  conn: Connection,
  flow: Pick<SessionFlow, 'append'>,
  audio: AppendAudio,
  prefix: string,
  clock: Clock = monotonicClock,
): OperatorFunction<Tick, SendReceipt> {
  return map((tick) => {
    const seq = tick.seq;
    const event_id = prefix + seq;
    const frame = flow.append(event_id, seq, seq * audio.packet_ms, audio.packetBase64(seq));
    return sendWithReceipt(conn, clock, seq, event_id, frame, tick.due_s, tick.fired_s);
  });
}

/**
 * Sends one frame and returns its receipt; the paced and the lockstep sends share it. A frame the
 * socket passed whole to the kernel (nothing buffered after the send) goes back to `spliceFrame`
 * for the next append, so the receipt's `frame` holds its bytes until the next append is built:
 * the receipt's subscribers, which run before that, may read it (the tracer copies it).
 */
export function sendWithReceipt(conn: Pick<Connection, 'send' | 'bufferedAmount'>, clock: Clock, seq: number, event_id: string, frame: string | Buffer, scheduled_s: number, start_s: number): SendReceipt {
  const before_s = clock.now_s();
  conn.send(frame);
  const completed_s = clock.now_s();
  const buffered_bytes = conn.bufferedAmount;
  if (buffered_bytes === 0 && typeof frame !== 'string') frameSent(frame);
  return { seq, event_id, scheduled_s, start_s, completed_s, send_ms: (completed_s - before_s) * 1000, buffered_bytes, frame, late: false };
}
