/** A stretch of played model audio the live estimate calls speech, seconds on the session's clock. */
export interface PlayedSpan {
  start_s: number;
  end_s: number;
}

/**
 * The model's audio as the user's speaker plays it: each chunk plays from its receipt on, after
 * what came before it, at its own rate; a gap in arrival is an underrun, not a skip. Each chunk is
 * voiced or not by its level (base64Dbfs: a cheap live estimate for the conversation's triggers); voiced
 * chunks that play back to back form one span.
 */
export class ModelPlayout {
  private played_until_s = -Infinity;
  private readonly voiced: PlayedSpan[] = [];

  /** A received chunk of `bytes` of PCM16 mono at `sample_rate`, received at `received_s`, voiced or not by its level. */
  add(received_s: number, bytes: number, sample_rate: number, voiced: boolean): void {
    const duration_s = (bytes >> 1) / sample_rate;
    if (duration_s <= 0) return;
    const start_s = Math.max(received_s, this.played_until_s);
    const end_s = start_s + duration_s;
    this.played_until_s = end_s;
    if (!voiced) return;
    const last = this.voiced[this.voiced.length - 1];
    if (last && start_s - last.end_s < 1e-6) last.end_s = end_s;
    else this.voiced.push({ start_s, end_s });
  }

  /** When the audio received so far has played out (-Infinity before any). */
  get playedUntil_s(): number {
    return this.played_until_s;
  }

  /** Model speech played between `from_s` and `to_s`, ms. */
  speechPlayedMs(from_s: number, to_s: number): number {
    let ms = 0;
    for (let i = this.voiced.length - 1; i >= 0; i--) {
      const span = this.voiced[i];
      if (span.end_s <= from_s) break;
      ms += Math.max(0, Math.min(span.end_s, to_s) - Math.max(span.start_s, from_s)) * 1000;
    }
    return ms;
  }

  /** Whether model speech is playing at `t_s`. */
  speakingAt(t_s: number): boolean {
    const last = this.voiced[this.voiced.length - 1];
    return last !== undefined && last.start_s <= t_s && t_s < last.end_s;
  }

  /** The end of the last voiced stretch that started after `from_s` and ended by `t_s`, or null. */
  lastSpeechEndBefore(from_s: number, t_s: number): number | null {
    const last = this.voiced[this.voiced.length - 1];
    if (!last || last.end_s > t_s || last.end_s <= from_s) return null;
    return last.end_s;
  }

  /** The voiced stretches, merged where the gap between them is under `merge_ms`. */
  spans(merge_ms = 500): PlayedSpan[] {
    const out: PlayedSpan[] = [];
    for (const s of this.voiced) {
      const last = out[out.length - 1];
      if (last && (s.start_s - last.end_s) * 1000 < merge_ms) last.end_s = s.end_s;
      else out.push({ ...s });
    }
    return out;
  }
}
