/**
 * Resolves once `count` sessions have each reported that they are done sending. Sessions send
 * `sglang.input_audio.end` only then: at 512 sessions the end flows of the first sessions to finish
 * (frames, socket closes, receipts) took the loop while the others' last packets were due, and made
 * them up to 80 ms late. Holding the ends moves the input end of an early session by at most the
 * start spread (one packet by default).
 */
export class SendBarrier {
  private left = Infinity;
  private release!: () => void;
  readonly passed = new Promise<void>((resolve) => (this.release = resolve));

  /** Sets how many sessions will report; call once, before streaming. */
  expect(count: number): void {
    this.left = count;
    if (count <= 0) this.release();
  }

  done(): void {
    if (--this.left <= 0) this.release();
  }
}
