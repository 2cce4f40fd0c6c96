import { tap, type MonoTypeOperatorFunction } from 'rxjs';

/**
 * Runs each sent packet's receipt through the stages that follow its send, in order, in one
 * operator (one operator per stage cost more rxjs per packet cycle than the stages themselves:
 * see receive/read-frames.ts).
 */
export function afterSend<T>(...stages: Array<(packet: T) => void>): MonoTypeOperatorFunction<T> {
  const [a, b, c, d] = stages;
  if (stages.length === 4) {
    return tap((p) => {
      a(p);
      b(p);
      c(p);
      d(p);
    });
  }
  return tap((p) => {
    for (const stage of stages) stage(p);
  });
}
