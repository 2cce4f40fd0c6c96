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

/** Lets every promise callback and `setImmediate` queued so far run: no wall time passes that anything waits for. */
export async function settle(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** More timers than any spec runs in one wait: past it, something re-arms without time passing. */
const MAX_FIRES = 200_000;

/**
 * Virtual time for whole sessions: ManualTimers that a spec runs forward. Between two timers,
 * every promise callback queued runs (`settle`), so async code behaves as it would on a loop that
 * is never late; each timer fires exactly at its due time.
 */
export class VirtualTime extends ManualTimers {
  /**
   * Each timer fires `fire_late_ms` (1 ns) after it was due: a deadline summed in floating point
   * (0.1 + 4 × 0.08 = 0.42000000000000004 s) is then past, as a real clock that moved on would have
   * it, instead of an early wake that re-arms at 0 ms forever on a clock that never moves. A spec
   * whose timers are all whole ms, and that checks figures in whole ms, can pass 0.
   */
  constructor(private readonly fire_late_ms = 1e-6) {
    super();
  }

  override fire(late_ms = 0): void {
    super.fire(late_ms + this.fire_late_ms);
  }

  /** Runs timers in due order until `until` settles; fails when it has not by virtual `limit_ms` from now. */
  async run<T>(until: Promise<T>, limit_ms = 600_000): Promise<T> {
    let done = false;
    const watched = until.finally(() => (done = true));
    watched.catch(() => undefined);
    const end_ms = this.now + limit_ms;
    await settle();
    for (let fires = 0; !done; fires++) {
      if (fires >= MAX_FIRES) throw new Error(`${MAX_FIRES} timers fired by ${this.now} ms: something re-arms without time passing`);
      this.pending.sort((a, b) => a.due_ms - b.due_ms);
      const next = this.pending[0];
      if (!next) throw new Error(`nothing left to run at ${this.now} ms, and the awaited work is not done`);
      if (next.due_ms > end_ms) throw new Error(`not done within ${limit_ms} ms of virtual time (now ${this.now} ms)`);
      this.fire();
      await settle();
    }
    return watched;
  }

  /** Runs every timer due within the next `ms`, then sets the clock to that instant. */
  async advance(ms: number): Promise<void> {
    const end_ms = this.now + ms;
    await settle();
    for (let fires = 0; ; fires++) {
      this.pending.sort((a, b) => a.due_ms - b.due_ms);
      const next = this.pending[0];
      if (!next || next.due_ms > end_ms) break;
      if (fires >= MAX_FIRES) throw new Error(`${MAX_FIRES} timers fired by ${this.now} ms: something re-arms without time passing`);
      this.fire();
      await settle();
    }
    this.now = end_ms;
  }
}
