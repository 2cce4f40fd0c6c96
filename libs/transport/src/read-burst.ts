import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';

/**
 * The longest the loop's reads of one poll phase may run before the socket being read waits for
 * the next timers phase, s. A poll phase reads up to 32 × 64 KB from each readable socket; a server
 * that floods small frames (vLLM-Omni's mock, `--fault unknown_event_flood`: 20,000 unknown events
 * a session, each acked) filled phases of 100 ms and more, and the deadline timer waited behind
 * them (1–3 packets late, docs/reliability.md). At 20 ms ordinary runs passed it too, when a GC
 * pause or a backlog fell inside a poll phase (a 300-Erlang churn hour waited 7,608 times, about 2
 * a second), and two 512-session pairs had receive delay p99 19.5–24.8 ms against 6.2–12.7 without
 * the bound. At 50 ms a flood's phases stay under a packet (max |deviation| 37–53 ms, none late).
 */
export const READ_BURST_S = 0.05;

/**
 * A socket read this long filled the read buffer libuv asks Node for (64 KiB): the kernel holds
 * more for that socket, and the poll phase reads it again at once, up to 32 times. That is a
 * flood. An ordinary read holds the few frames one session got since the last turn (a 512-session
 * run's are a few KB), and only such full reads are held back: a poll phase made long by a GC
 * pause or by many sockets each read once is left alone. With every read held back past the bound,
 * 512-session runs waited 46–243 times in 30 s and were late in 2 of 4 runs (611 packets), against
 * 0 of 4 without the bound (docs/performance.md, "The bounded reads").
 */
export const FULL_READ_BYTES = 64 * 1024;

/**
 * The socket reads of one poll phase of the loop, over every connection of the process: the first
 * read opens the burst, and it closes when pending I/O has had its turn (`afterIo`, Node's
 * `setImmediate`, which runs once the poll phase is over). A read that ends past the bound says
 * so, and its connection pauses its socket until `later` calls it back, at the next timers phase:
 * the deadlines due meanwhile go first, and the socket's bytes wait in the kernel.
 */
export class ReadBurst {
  private open = false;
  private start_s = 0;
  /** Times each burst was past the bound, a socket paused for it. */
  paused = 0;
  private readonly close = (): void => {
    this.open = false;
  };

  constructor(
    /** The host's clock and timers: the burst is the loop's own time, whatever clock a connection stamps with. */
    private readonly timers: TimerHost = nodeTimerHost,
    private readonly bound_s = READ_BURST_S,
    private readonly full_read_bytes = FULL_READ_BYTES,
  ) {}

  /** A read begins: the first of a poll phase opens the burst. */
  begin(): void {
    if (this.open) return;
    this.open = true;
    this.start_s = this.timers.now_s();
    this.timers.afterIo(this.close);
  }

  /** A read ended: whether the burst has now held the loop past the bound. */
  over(): boolean {
    return this.timers.now_s() - this.start_s > this.bound_s;
  }

  /** A read of `bytes` ended: whether its socket waits (a full read, more waiting in the kernel, with the burst past the bound). */
  holds(bytes: number): boolean {
    return bytes >= this.full_read_bytes && this.over();
  }

  /** Calls `resume` at the next timers phase, after the deadlines due by then. */
  later(resume: () => void): void {
    this.paused++;
    this.timers.arm(0, resume);
  }
}

/** The reads of every connection of this process: one loop reads them all. */
export const processReads = new ReadBurst();
