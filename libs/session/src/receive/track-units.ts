import { NativeEvent } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

const UNIT_DONE = NativeEvent.unitDone;

/** The stage that hands the receipt time of each native `sglang.unit.done` to `onUnitDone` (unit lag, lockstep). */
export function trackUnits(onUnitDone: (received_s: number) => void): (e: ReceivedEvent) => void {
  return (e) => {
    if (e.frame.type === UNIT_DONE) onUnitDone(e.received_s);
  };
}
