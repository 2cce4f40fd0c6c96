import { createUsHistogram, recordMs, type Histogram } from '@duplex-bench/metrics';

/** Sessions as they end, counted for the live exposition: the summary counts the same results at the end. */
export class LiveSessions {
  completed = 0;
  readonly incomplete = new Map<string, number>();

  ended(completed: boolean, reason: string | undefined): void {
    if (completed) this.completed++;
    else this.incomplete.set(reason ?? 'unknown', (this.incomplete.get(reason ?? 'unknown') ?? 0) + 1);
  }
}

/** One finished model response, as the response tracker closes it (client clock, ms; RTF a ratio). */
export interface LiveResponse {
  ttft_ms: number | null;
  ttfp_ms: number | null;
  rtf: number | null;
}

/** Responses as they finish, pooled per process: once per response, never per packet. */
export class LiveResponses {
  readonly ttft: Histogram = createUsHistogram();
  readonly ttfp: Histogram = createUsHistogram();
  /** RTF × 1000 recorded as "ms": the ratio at 10⁻⁶ resolution in a µs histogram. */
  readonly rtf: Histogram = createUsHistogram();

  /** A response's TTFT or TTFP as soon as it arrives: a response that lasts a whole session is seen live. */
  first(figure: 'ttft' | 'ttfp', ms: number): void {
    if (ms >= 0) recordMs(figure === 'ttft' ? this.ttft : this.ttfp, ms);
  }

  add(r: LiveResponse): void {
    if (r.ttft_ms !== null && r.ttft_ms >= 0) recordMs(this.ttft, r.ttft_ms);
    if (r.ttfp_ms !== null && r.ttfp_ms >= 0) recordMs(this.ttfp, r.ttfp_ms);
    if (r.rtf !== null && r.rtf >= 0) recordMs(this.rtf, r.rtf * 1000);
  }
}
