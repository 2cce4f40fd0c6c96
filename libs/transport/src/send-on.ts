import { map, type OperatorFunction } from 'rxjs';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';
import type { WsConnection } from './connection';

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
  frame: string | Buffer;
}

/** Sends each frame on `conn` as it comes and emits its receipt. */
export function sendOn(conn: WsConnection, clock: Clock = monotonicClock): OperatorFunction<OutgoingFrame, SendReceipt> {
  return map((out) => {
    const before_s = clock.now_s();
    conn.send(out.frame);
    const completed_s = clock.now_s();
    return {
      seq: out.seq,
      event_id: out.event_id,
      scheduled_s: out.scheduled_s,
      start_s: out.start_s,
      completed_s,
      send_ms: (completed_s - before_s) * 1000,
      buffered_bytes: conn.bufferedAmount,
      frame: out.frame,
    };
  });
}
