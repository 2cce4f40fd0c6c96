import type { CameraFrames } from './flow';

/**
 * When a session's camera frames are due: frame k at k × period of media time, its image the k-th
 * of the run's frames. Past the last one the frames loop, or with `hold` the last one repeats (a
 * camera that outlives its clip shows its last picture). `upTo(ms)` hands out, once each, the
 * frames due before `ms`; `closedBy(ms, closes)` those whose unit `ms` of audio has closed.
 */
export class FrameTimes {
  private next_k = 0;
  sent = 0;
  bytes = 0;

  constructor(
    private readonly frames: CameraFrames,
    readonly period_ms: number,
    private readonly afterLast: 'loop' | 'hold' = 'loop',
  ) {}

  /** The frames due before media time `until_ms` not handed out yet: each its time and image. */
  upTo(until_ms: number): Array<{ t_ms: number; image: Uint8Array }> {
    return this.handOut((t_ms) => t_ms < until_ms - 1e-9);
  }

  /**
   * The frames whose unit the audio sent so far has closed (`closes(t_ms)`: the audio, ms, that
   * closes the unit a frame of time `t_ms` was captured in), not handed out yet.
   */
  closedBy(audio_ms: number, closes: (t_ms: number) => number): Array<{ t_ms: number; image: Uint8Array }> {
    return this.handOut((t_ms) => closes(t_ms) <= audio_ms + 1e-9);
  }

  private handOut(due: (t_ms: number) => boolean): Array<{ t_ms: number; image: Uint8Array }> {
    const out: Array<{ t_ms: number; image: Uint8Array }> = [];
    const n = this.frames.base64.length;
    while (due(this.next_k * this.period_ms)) {
      const k = this.next_k++;
      const i = this.afterLast === 'hold' ? Math.min(k, n - 1) : k % n;
      out.push({ t_ms: Math.round(k * this.period_ms * 1000) / 1000, image: this.frames.base64[i] });
      this.sent++;
      this.bytes += this.frames.bytes[i];
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

/**
 * vLLM-Omni's model units in appended audio: the first closes at 1030 ms, each later one 1000 ms
 * after it (their client's `DUPLEX_FIRST_UNIT_MS` and `DUPLEX_UNIT_MS`: Stage0's first chunk of
 * 1035 ms aligned down to its 160-sample hop). A camera frame rides the append that closes the
 * unit it was captured in, so the server binds it to that unit's audio.
 */
export const VLLM_UNITS = { first_ms: 1030, unit_ms: 1000 } as const;

/** The appended audio, ms, that closes the vLLM-Omni unit holding media time `t_ms` (their `duplex_unit_boundary_ms`). */
export function vllmUnitClosesAt(t_ms: number): number {
  return VLLM_UNITS.first_ms + Math.floor(t_ms / VLLM_UNITS.unit_ms + 1e-9) * VLLM_UNITS.unit_ms;
}
