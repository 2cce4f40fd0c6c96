import type { CameraFrames } from './flow';

/**
 * When a session's camera frames are due: frame k at k × period of media time, its image the k-th
 * of the run's frames (looped). `upTo(ms)` hands out, once each, the frames due before `ms`.
 */
export class FrameTimes {
  private next_k = 0;
  sent = 0;
  bytes = 0;

  constructor(
    private readonly frames: CameraFrames,
    readonly period_ms: number,
  ) {}

  /** The frames due before media time `until_ms` not handed out yet: each its time and image. */
  upTo(until_ms: number): Array<{ t_ms: number; image: Uint8Array }> {
    const out: Array<{ t_ms: number; image: Uint8Array }> = [];
    const n = this.frames.base64.length;
    while (this.next_k * this.period_ms < until_ms - 1e-9) {
      const k = this.next_k++;
      out.push({ t_ms: Math.round(k * this.period_ms * 1000) / 1000, image: this.frames.base64[k % n] });
      this.sent++;
      this.bytes += this.frames.bytes[k % n];
    }
    return out;
  }

  /** The largest frame, bytes. */
  largest(): number {
    return Math.max(...this.frames.bytes);
  }
}

/** The period between frames: `fps` when given, else `default_ms` (a native unit, or a second). */
export function framePeriodMs(frames: CameraFrames, default_ms: number): number {
  return frames.fps ? 1000 / frames.fps : default_ms;
}
