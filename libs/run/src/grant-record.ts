import type { SessionGrant } from '@duplex-bench/transport';

/** What run.json keeps of the servers' grants: the first one, and how many sessions saw another. */
export interface GrantRecord {
  output_sample_rate?: number;
  native_unit_ms?: number;
  chunk_period_ms?: number;
  sessions: number;
  /** Sessions whose grant differed from the first. */
  differing: number;
  /** Where the figures' output rate came from. */
  output_sample_rate_used: number;
  output_sample_rate_source: 'server grant' | '--output-sample-rate' | 'dialect default (the server stated none)' | "each audio delta's own sample_rate_hz";
  /**
   * Output audio deltas counted by the rate each stated (vLLM-Omni `sample_rate_hz`), over every
   * session: a server may grant one rate and send another (pcm16 is never resampled).
   */
  delta_sample_rates?: Record<string, number>;
}

/**
 * Collects the sessions' grants for run.json. The server's grant decides the output rate; a rate
 * the user gave overrides it, and when the two disagree the run says so once on stderr.
 */
export class GrantLog {
  readonly record: GrantRecord;
  private warned = false;

  constructor(
    private readonly output_sample_rate: number,
    private readonly given: boolean,
    private readonly warn: (line: string) => void,
  ) {
    this.record = {
      sessions: 0,
      differing: 0,
      output_sample_rate_used: output_sample_rate,
      output_sample_rate_source: given ? '--output-sample-rate' : 'dialect default (the server stated none)',
    };
  }

  /**
   * Counts the rates the sessions' audio deltas stated. Durations use each delta's own rate where it
   * states one (response metrics read it from the delta), and run.json says so, with the most common rate as the one used.
   */
  addDeltaRates(sessions: Array<{ delta_sample_rates?: Record<string, number> }>): void {
    const counts: Record<string, number> = {};
    for (const s of sessions) for (const [rate, n] of Object.entries(s.delta_sample_rates ?? {})) counts[rate] = (counts[rate] ?? 0) + n;
    const rates = Object.entries(counts);
    if (rates.length === 0) return;
    this.record.delta_sample_rates = counts;
    const [top] = rates.sort((a, b) => b[1] - a[1])[0];
    this.record.output_sample_rate_used = Number(top);
    this.record.output_sample_rate_source = "each audio delta's own sample_rate_hz";
  }

  add(grant: SessionGrant): void {
    const r = this.record;
    if (r.sessions++ === 0) {
      Object.assign(r, grant);
      if (grant.output_sample_rate && !this.given) {
        r.output_sample_rate_used = grant.output_sample_rate;
        r.output_sample_rate_source = 'server grant';
      }
    } else if (grant.output_sample_rate !== r.output_sample_rate || grant.native_unit_ms !== r.native_unit_ms || grant.chunk_period_ms !== r.chunk_period_ms) {
      r.differing++;
    }
    if (this.given && !this.warned && grant.output_sample_rate !== undefined && grant.output_sample_rate !== this.output_sample_rate) {
      this.warned = true;
      this.warn(
        `warning: the server grants ${grant.output_sample_rate} Hz output but --output-sample-rate is ${this.output_sample_rate}; figures use ${this.output_sample_rate} Hz as asked (drop the flag to use the server's rate)`,
      );
    }
  }
}
