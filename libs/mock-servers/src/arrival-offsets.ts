/**
 * One session's packet arrivals, each kept as its offset from its media time (arrival − t_start,
 * in ms). A packet's deviation is its offset minus the session's earliest offset: anchoring on
 * packet 0's arrival instead shifted every later packet of a session whose first packet came late
 * in the start burst (64 sessions: the mock reported p99 15 ms while the client's own send
 * deviation was p99 3.4 ms).
 *
 * Offsets are kept relative to the session's first one, as 32-bit floats: 4 bytes a packet, not 8
 * (an hour at 512 sessions held 184 MB of them). Within 1,000 ms of the first offset a float32
 * keeps 0.06 µs; the deviations are recorded at µs.
 */
export class ArrivalOffsets {
  private offsets = new Float32Array(256);
  private n = 0;
  /** The first offset, ms: the others are kept relative to it. */
  private base = Number.NaN;
  /** The smallest offset kept, relative and rounded as kept (so no deviation comes out below 0). */
  private min = Infinity;

  add(offset_ms: number): void {
    if (this.n === this.offsets.length) {
      const grown = new Float32Array(this.offsets.length * 2);
      grown.set(this.offsets);
      this.offsets = grown;
    }
    if (this.n === 0) this.base = offset_ms;
    const kept = Math.fround(offset_ms - this.base);
    this.offsets[this.n++] = kept;
    if (kept < this.min) this.min = kept;
  }

  get count(): number {
    return this.n;
  }

  /** Every packet's deviation so far, against the earliest offset so far (all ≥ 0). */
  forEachDeviation(fn: (deviation_ms: number) => void): void {
    for (let i = 0; i < this.n; i++) fn(this.offsets[i] - this.min);
  }
}
