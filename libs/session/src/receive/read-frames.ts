import type { MonoTypeOperatorFunction } from 'rxjs';
import type { ReceivedEvent } from '@duplex-bench/transport';
import { runStages } from '../stages';

/** Runs each received frame through the receive stages, in order, in one operator (`runStages`). */
export function readFrames(...stages: Array<(e: ReceivedEvent) => void>): MonoTypeOperatorFunction<ReceivedEvent> {
  return runStages(stages);
}
