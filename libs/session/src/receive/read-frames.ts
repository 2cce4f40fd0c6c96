import { tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { ReceivedEvent } from '@duplex-bench/transport';

/**
 * Runs each received frame through the receive stages, in order, in one operator. Four operators
 * of their own cost 4.8 µs more rxjs per packet cycle at 512 sessions than one (perf, steady
 * state, tools/bench/perf-record.sh): each stage is a named function in its own file instead.
 */
export function readFrames(...stages: Array<(e: ReceivedEvent) => void>): MonoTypeOperatorFunction<ReceivedEvent> {
  const [a, b, c, d] = stages;
  if (stages.length === 4) {
    return tap((e) => {
      a(e);
      b(e);
      c(e);
      d(e);
    });
  }
  return tap((e) => {
    for (const stage of stages) stage(e);
  });
}
