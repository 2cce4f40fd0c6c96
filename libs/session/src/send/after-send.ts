import type { MonoTypeOperatorFunction } from 'rxjs';
import { runStages } from '../stages';

/** Runs each sent packet's receipt through the stages that follow its send, in order, in one operator (`runStages`). */
export function afterSend<T>(...stages: Array<(packet: T) => void>): MonoTypeOperatorFunction<T> {
  return runStages(stages);
}
