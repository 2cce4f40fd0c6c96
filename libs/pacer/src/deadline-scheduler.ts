import { nodeTimerHost, type TimerHost } from './clock';

/** Called with the clock reading taken just before the callback runs. */
export type DeadlineCallback = (fired_s: number) => void;

/**
 * A deadline its owner arms again and again (a session's next packet): one object for all of them.
 * Arming it while armed moves it; `cancel` takes it out.
 */
export interface DeadlineTimer {
  /** Runs the timer's callback at or after `deadline_s` (a deadline in the past: on the next wake). */
  at(deadline_s: number): void;
  cancel(): void;
}

/** A timer's place in the heap: made once per timer, so arming it makes no object. */
interface Slot {
  deadline_s: number;
  /** When it was armed, among all arming: equal deadlines run in that order. */
  order: number;
  /** Its index in the heap, or -1 when it is not armed. */
  index: number;
  fn: DeadlineCallback;
}

export interface DeadlineSchedulerOptions {
  host?: TimerHost;
  /**
   * Most callbacks run in one wake before pending I/O gets a turn. Without a cap an overloaded
   * process kept firing overdue deadlines, never read its sockets, grew to 2 GB and hid its loop lag.
   */
  maxFiresPerWake?: number;
}

export interface DeadlineSchedulerStats {
  wakes: number;
  /** Wakes that came before the earliest deadline (setTimeout may fire up to ~2 ms early). */
  early_wakes: number;
  /** Wakes that hit the cap and yielded to I/O with work still due. */
  capped_wakes: number;
  fires: number;
  /** Largest (fire time - deadline), in ms: how late the timer itself was. */
  max_lateness_ms: number;
  pending: number;
}

/**
 * One timer for many deadlines: callbacks sit in a min-heap by deadline and a single timer is armed
 * for the earliest. Every wake re-reads the clock, so an early wake re-arms instead of firing early.
 * The heap holds each `DeadlineTimer`'s slot, made once: a session's packets cost no object each,
 * and, the slots being as old as their sessions, the heap's moves need no young-to-old bookkeeping.
 */
export class DeadlineScheduler {
  private readonly host: TimerHost;
  private readonly maxFiresPerWake: number;
  private readonly heap: Slot[] = [];
  private order = 0;
  private armedFor = Infinity;
  private disarm: (() => void) | null = null;
  private running = false;
  private readonly counters: Omit<DeadlineSchedulerStats, 'pending'> = {
    wakes: 0,
    early_wakes: 0,
    capped_wakes: 0,
    fires: 0,
    max_lateness_ms: 0,
  };

  constructor(options: DeadlineSchedulerOptions = {}) {
    this.host = options.host ?? nodeTimerHost;
    this.maxFiresPerWake = options.maxFiresPerWake ?? 256;
    if (!(this.maxFiresPerWake >= 1)) throw new RangeError('maxFiresPerWake must be at least 1');
  }

  now_s(): number {
    return this.host.now_s();
  }

  /** Runs `fn` at or after `deadline_s`; a deadline in the past runs on the next wake. Returns a cancel function. */
  schedule(deadline_s: number, fn: DeadlineCallback): () => void {
    const timer = this.timer(fn);
    timer.at(deadline_s);
    return timer.cancel;
  }

  /** A timer that runs `fn` at each deadline it is armed for (`at`), until cancelled: no object per arming. */
  timer(fn: DeadlineCallback): DeadlineTimer {
    const slot: Slot = { deadline_s: 0, order: 0, index: -1, fn };
    return {
      at: (deadline_s) => this.place(slot, deadline_s),
      cancel: () => {
        if (slot.index >= 0) this.removeAt(slot.index);
      },
    };
  }

  stats(): DeadlineSchedulerStats {
    return { ...this.counters, pending: this.heap.length };
  }

  private armFor(deadline_s: number): void {
    this.disarm?.();
    this.armedFor = deadline_s;
    // The epsilon keeps float noise (1.0000000001 ms) from costing a whole extra millisecond.
    const delay_ms = Math.max(0, Math.ceil((deadline_s - this.host.now_s()) * 1000 - 1e-6));
    this.disarm = this.host.arm(delay_ms, () => this.wake());
  }

  private wake(): void {
    this.disarm = null;
    this.armedFor = Infinity;
    this.counters.wakes++;
    if (this.heap.length === 0) return;
    if (this.heap[0].deadline_s > this.host.now_s()) {
      this.counters.early_wakes++;
      this.armFor(this.heap[0].deadline_s);
      return;
    }
    this.running = true;
    let fired = 0;
    try {
      while (this.heap.length > 0 && fired < this.maxFiresPerWake) {
        const top = this.heap[0];
        const now_s = this.host.now_s();
        if (top.deadline_s > now_s) break;
        this.removeAt(0);
        fired++;
        this.counters.fires++;
        const lateness_ms = (now_s - top.deadline_s) * 1000;
        if (lateness_ms > this.counters.max_lateness_ms) this.counters.max_lateness_ms = lateness_ms;
        top.fn(now_s);
      }
    } finally {
      this.running = false;
    }
    if (this.heap.length === 0) return;
    if (fired >= this.maxFiresPerWake && this.heap[0].deadline_s <= this.host.now_s()) {
      this.counters.capped_wakes++;
      this.armedFor = -Infinity;
      this.disarm = this.host.afterIo(() => this.wake());
      return;
    }
    this.armFor(this.heap[0].deadline_s);
  }

  /** Arms `slot` for `deadline_s`: into the heap, or moved within it. */
  private place(slot: Slot, deadline_s: number): void {
    slot.deadline_s = deadline_s;
    slot.order = this.order++;
    if (slot.index < 0) {
      slot.index = this.heap.length;
      this.heap.push(slot);
      this.up(slot.index);
    } else {
      this.down(this.up(slot.index));
    }
    if (!this.running && deadline_s < this.armedFor) this.armFor(deadline_s);
  }

  /** Takes the slot at `i` out of the heap. */
  private removeAt(i: number): void {
    const heap = this.heap;
    const slot = heap[i];
    const last = heap.pop() as Slot;
    slot.index = -1;
    if (last === slot) return;
    heap[i] = last;
    last.index = i;
    this.down(this.up(i));
  }

  private less(a: Slot, b: Slot): boolean {
    return a.deadline_s < b.deadline_s || (a.deadline_s === b.deadline_s && a.order < b.order);
  }

  /** Moves the slot at `i` up to its place; returns where it ends. */
  private up(i: number): number {
    const heap = this.heap;
    const slot = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(slot, heap[parent])) break;
      this.put(heap[parent], i);
      i = parent;
    }
    this.put(slot, i);
    return i;
  }

  /** Moves the slot at `i` down to its place. */
  private down(i: number): void {
    const heap = this.heap;
    const slot = heap[i];
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.less(heap[r], heap[l]) ? r : l;
      if (!this.less(heap[child], slot)) break;
      this.put(heap[child], i);
      i = child;
    }
    this.put(slot, i);
  }

  private put(slot: Slot, i: number): void {
    this.heap[i] = slot;
    slot.index = i;
  }
}
