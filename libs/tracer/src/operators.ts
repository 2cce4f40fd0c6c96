import { tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { ReceiptTimes, SessionTraceSink } from './trace-writer';

/** Hands every send receipt, and the frame it sent, to the session's sink as it passes. */
export function traceReceipts<T extends ReceiptTimes & { frame: string | Uint8Array }>(sink: SessionTraceSink): MonoTypeOperatorFunction<T> {
  return tap((r) => {
    sink.sent(r.frame, r.start_s);
    sink.receipt(r);
  });
}

/** Hands every received frame to the sink, as it arrived: its bytes when the transport kept them. */
export function traceReceived<T extends { frame: { text: string }; raw?: Uint8Array; received_s: number }>(
  sink: SessionTraceSink,
): MonoTypeOperatorFunction<T> {
  return tap((e) => sink.received(e.raw ?? e.frame.text, e.received_s));
}
