/**
 * One session's packet arrivals, each kept as its offset from its media time (arrival − t_start,
 * in ms). A packet's deviation is its offset minus the session's earliest offset: anchoring on
 * packet 0's arrival instead shifted every later packet of a session whose first packet came late
 * in the start burst (64 sessions: the mock reported p99 15 ms while the client's own send
 * deviation was p99 3.4 ms).
 */
export class ArrivalOffsets {
  private offsets = new Float64Array(256);
  private n = 0;
  private min = Infinity;

  add(offset_ms: number): void {
    if (this.n === this.offsets.length) {
      const grown = new Float64Array(this.offsets.length * 2);
      grown.set(this.offsets);
      this.offsets = grown;
    }
    this.offsets[this.n++] = offset_ms;
    if (offset_ms < this.min) this.min = offset_ms;
  }

  get count(): number {
    return this.n;
  }

  /** Every packet's deviation so far, against the earliest offset so far (all ≥ 0). */
  forEachDeviation(fn: (deviation_ms: number) => void): void {
    for (let i = 0; i < this.n; i++) fn(this.offsets[i] - this.min);
  }
}
