import { nodeTimerHost, type TimerHost } from './clock';

/** Called with the clock reading taken just before the callback runs. */
export type DeadlineCallback = (fired_s: number) => void;

interface Entry {
  deadline_s: number;
  order: number;
  fn: DeadlineCallback;
  cancelled: boolean;
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
 */
export class DeadlineScheduler {
  private readonly host: TimerHost;
  private readonly maxFiresPerWake: number;
  private readonly heap: Entry[] = [];
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
    const entry: Entry = { deadline_s, order: this.order++, fn, cancelled: false };
    this.push(entry);
    if (!this.running && deadline_s < this.armedFor) this.armFor(deadline_s);
    return () => {
      entry.cancelled = true;
    };
  }

  stats(): DeadlineSchedulerStats {
    return { ...this.counters, pending: this.heap.filter((e) => !e.cancelled).length };
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
    this.dropCancelled();
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
        if (top.cancelled) {
          this.pop();
          continue;
        }
        const now_s = this.host.now_s();
        if (top.deadline_s > now_s) break;
        this.pop();
        fired++;
        this.counters.fires++;
        const lateness_ms = (now_s - top.deadline_s) * 1000;
        if (lateness_ms > this.counters.max_lateness_ms) this.counters.max_lateness_ms = lateness_ms;
        top.fn(now_s);
      }
    } finally {
      this.running = false;
    }
    this.dropCancelled();
    if (this.heap.length === 0) return;
    if (fired >= this.maxFiresPerWake && this.heap[0].deadline_s <= this.host.now_s()) {
      this.counters.capped_wakes++;
      this.armedFor = -Infinity;
      this.disarm = this.host.afterIo(() => this.wake());
      return;
    }
    this.armFor(this.heap[0].deadline_s);
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && this.heap[0].cancelled) this.pop();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.deadline_s < b.deadline_s || (a.deadline_s === b.deadline_s && a.order < b.order);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(heap[i], heap[parent])) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  private pop(): Entry {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop() as Entry;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && this.less(heap[l], heap[m])) m = l;
        if (r < heap.length && this.less(heap[r], heap[m])) m = r;
        if (m === i) break;
        swap(heap, i, m);
        i = m;
      }
    }
    return top;
  }
}

/** Swaps two entries in place (a destructuring swap made an array per step: a fifth of a run's allocation outside the frame path). */
function swap(heap: Entry[], i: number, j: number): void {
  const t = heap[i];
  heap[i] = heap[j];
  heap[j] = t;
}
