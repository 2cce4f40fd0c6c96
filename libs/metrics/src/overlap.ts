/** Tracks how many input streams are open at once and the peak. */
export class OverlapCounter {
  active = 0;
  peak = 0;
  /** Streams opened so far. */
  opened = 0;
  open(): void {
    this.opened++;
    this.active++;
    if (this.active > this.peak) this.peak = this.active;
  }
  close(): void {
    this.active--;
  }
}

/** Peak number of [start, end] intervals open at one instant, e.g. input streams across processes. */
export function peakOverlap(intervals: Array<[number, number]>): number {
  const events: Array<[number, number]> = [];
  for (const [start, end] of intervals) {
    events.push([start, 1], [end, -1]);
  }
  // Ends sort before starts at the same instant: touching streams do not overlap.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let active = 0;
  let peak = 0;
  for (const [, delta] of events) {
    active += delta;
    if (active > peak) peak = active;
  }
  return peak;
}
