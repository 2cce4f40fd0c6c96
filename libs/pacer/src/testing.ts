import type { TimerHost } from './clock';

/**
 * Timers a test fires by hand, each as late as it likes: a stalled loop without a stall, a
 * gathering window without a wait. `now` is in ms; nothing fires unless `fire` is called.
 */
export class ManualTimers implements TimerHost {
  now = 0;
  pending: Array<{ due_ms: number; delay_ms: number; fn: () => void; background: boolean }> = [];
  now_s = (): number => this.now / 1000;

  arm(delay_ms: number, fn: () => void, options?: { background?: boolean }): () => void {
    const entry = { due_ms: this.now + delay_ms, delay_ms, fn, background: options?.background === true };
    this.pending.push(entry);
    return () => {
      this.pending = this.pending.filter((e) => e !== entry);
    };
  }

  afterIo(fn: () => void): () => void {
    return this.arm(0, fn);
  }

  /** Fires the earliest timer, `late_ms` after it was due. */
  fire(late_ms = 0): void {
    this.pending.sort((a, b) => a.due_ms - b.due_ms);
    const next = this.pending.shift();
    if (!next) throw new Error('no timer armed');
    this.now = next.due_ms + late_ms;
    next.fn();
  }
}
