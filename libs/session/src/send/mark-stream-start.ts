import { tap, type MonoTypeOperatorFunction } from 'rxjs';

/** Calls `onStart` with packet 0's send start, as it passes: the input stream's origin. */
export function markStreamStart<T extends { seq: number; start_s: number }>(onStart: (start_s: number) => void): MonoTypeOperatorFunction<T> {
  return tap((packet) => {
    if (packet.seq === 0) onStart(packet.start_s);
  });
}
