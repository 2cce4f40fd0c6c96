import type { DeadlineScheduler } from '@duplex-bench/pacer';

/** The time between two sessions' ends of input once the barrier passed: the start spread's default step. */
export const END_STEP_S = 0.002;

type Releases = Pick<DeadlineScheduler, 'schedule' | 'now_s'>;

/** A session waiting for its turn: the `k`th to ask, released through its scheduler. */
interface Waiter {
  k: number;
  releases: Releases;
  resolve: () => void;
}

/**
 * Holds each session's end of input until `count` sessions have each reported that they are done
 * sending. At 512 sessions the end flows of the first sessions to finish (frames, socket closes,
 * receipts) took the loop while the others' last packets were due, and made them up to 80 ms late.
 *
 * Once it passed, the sessions go one every `END_STEP_S`, in the order they asked (the order they
 * finished sending), as the starts went by default: with starts 2 ms apart, each session's input
 * end is then held as long as the start spread, the first's and the last's alike. Let go all at
 * once, 512 sessions' end flows (about 1.2 ms of the loop each) came in one burst, and the server's
 * replies waited in their sockets behind it: a 512-session run's last tenth of a second had 3,088
 * frames each stamped 5 to 66 ms after the server sent it, 0.4 % of the run's frames
 * (docs/performance.md). The hold is the client's own wait, left out of the server's figures.
 */
export class SendBarrier {
  private left = Infinity;
  private passed_s: number | null = null;
  private asked = 0;
  private readonly waiting: Waiter[] = [];

  /** Sets how many sessions will report; call once, before streaming. */
  expect(count: number): void {
    this.left = count;
    if (count <= 0) this.pass(null);
  }

  done(): void {
    if (--this.left <= 0) this.pass(this.waiting[0]?.releases ?? null);
  }

  /** Resolves once every session reported, on this caller's step after that. */
  turn(releases: Releases): Promise<void> {
    return new Promise<void>((resolve) => {
      const w: Waiter = { k: this.asked++, releases, resolve };
      if (this.passed_s === null) this.waiting.push(w);
      else this.release(w);
    });
  }

  private pass(releases: Releases | null): void {
    if (this.passed_s !== null) return;
    this.passed_s = releases?.now_s() ?? -Infinity;
    for (const w of this.waiting.splice(0)) this.release(w);
  }

  private release(w: Waiter): void {
    const at_s = (this.passed_s as number) + w.k * END_STEP_S;
    if (at_s <= w.releases.now_s()) w.resolve();
    else w.releases.schedule(at_s, () => w.resolve());
  }
}
