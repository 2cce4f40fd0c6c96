import { clientTtft, clientTtfp } from '@duplex-bench/metrics';
import type { SessionContext } from '@duplex-bench/session';
import { clientFamilies, duplexFamilies, exposeMetrics, LiveResponses, LiveSessions, type Labels, type MetricsEndpoint } from '@duplex-bench/telemetry';
import type { ProcessMeasures } from './process-measures';

/**
 * A duplex process's live `/metrics` (`--metrics-port`): its families read the recorders the
 * summary reads (`ProcessMeasures`); sessions and responses are counted as they end, once each.
 */
export class ProcessTelemetry {
  readonly sessions = new LiveSessions();
  readonly responses = new LiveResponses();
  private endpoint: MetricsEndpoint | null = null;

  constructor(
    private readonly measures: ProcessMeasures,
    /** The trace writer's backlog, read at scrape time (the writer starts after the sessions' context). */
    private readonly backlogBytes: () => number,
  ) {}

  /** Starts serving on 127.0.0.1:`port`. Throws TelemetryError when the port is taken. */
  async listen(port: number, labels: Labels, say: (line: string) => void): Promise<void> {
    this.endpoint = await exposeMetrics({ port, labels, say, families: this.families() });
  }

  /** What each session tells the exposition: its end, and each response as it finishes. */
  hooks(): Pick<SessionContext, 'onSessionEnd' | 'onResponse'> {
    return {
      onSessionEnd: (r) => this.sessions.ended(r.completed, r.reason),
      onResponse: (r) => this.responses.add({ ttft_ms: clientTtft(r), ttfp_ms: clientTtfp(r), rtf: r.rtf }),
    };
  }

  /** Serves `seconds` more, or until `cut` (an interrupt); then closes. */
  async lingerThenClose(seconds: number, cut: Promise<unknown>, say: (line: string) => void): Promise<void> {
    if (!this.endpoint) return;
    if (seconds > 0) say(`metrics: serving the final counts ${seconds} s more (--metrics-linger-s; Ctrl-C ends it)`);
    await this.endpoint.linger(seconds, cut);
    await this.close();
  }

  async close(): Promise<void> {
    await this.endpoint?.close();
    this.endpoint = null;
  }

  private families() {
    const m = this.measures;
    return [
      ...duplexFamilies({
        packets: () => m.pacing,
        deviation: m.pacing.deviation,
        streams: () => ({ started: m.overlap.opened, active: m.overlap.active }),
        sessions: this.sessions,
        responses: this.responses,
      }),
      ...clientFamilies({ loopLag: () => m.loop.histogram, gc: () => m.gc, backlogBytes: this.backlogBytes }),
    ];
  }
}
