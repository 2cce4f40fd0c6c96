import { tap, type MonoTypeOperatorFunction } from 'rxjs';
import { NativeEvent } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

const UNIT_DONE = NativeEvent.unitDone;

/** Hands the receipt time of each native `sglang.unit.done` to `onUnitDone` (unit lag, lockstep). */
export function trackUnits(onUnitDone: (received_s: number) => void): MonoTypeOperatorFunction<ReceivedEvent> {
  return tap((e) => {
    if (e.frame.type === UNIT_DONE) onUnitDone(e.received_s);
  });
}
