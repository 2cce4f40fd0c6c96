import { decodeHistogram, type BehaviourParts } from '@duplex-bench/metrics';
import type { SessionContext } from '@duplex-bench/session';
import { clientFamilies, duplexFamilies, exposeMetrics, LiveResponses, LiveSessions, OtlpPush, type Family, type Labels, type LiveBehaviour, type MetricsEndpoint } from '@duplex-bench/telemetry';
import type { ProcessMeasures } from './process-measures';

/**
 * A duplex process's live `/metrics` (`--metrics-port`): its families read the recorders the
 * summary reads (`ProcessMeasures`); sessions and responses are counted as they end, once each.
 */
export class ProcessTelemetry {
  readonly sessions = new LiveSessions();
  readonly responses = new LiveResponses();
  private endpoint: MetricsEndpoint | null = null;
  private push: OtlpPush | null = null;
  private behaviourFigures: LiveBehaviour | null = null;
  /** What /metrics serves and OTLP pushes: the same families, read at each scrape or push. */
  readonly families: Family[];

  constructor(
    private readonly measures: ProcessMeasures,
    /** The trace writer's backlog, read at scrape time (the writer starts after the sessions' context). */
    private readonly backlogBytes: () => number,
  ) {
    this.families = this.familiesOf();
  }

  /** Starts serving on 127.0.0.1:`port`. Throws TelemetryError when the port is taken. */
  async listen(port: number, labels: Labels, say: (line: string) => void): Promise<void> {
    this.endpoint = await exposeMetrics({ port, labels, say, families: this.families });
  }

  /** `--otlp-endpoint`: the same families pushed over OTLP/HTTP every `interval_s`. */
  async pushTo(endpoint: string, interval_s: number, labels: Labels, say: (line: string) => void): Promise<void> {
    this.push = await OtlpPush.start({ endpoint, interval_s, families: this.families, labels, resource: { 'service.name': 'duplex-bench' }, say });
  }

  /** A conversation's behaviour figures, once the run has them (the last scrapes and the last push carry them). */
  behaviour(parts: BehaviourParts): void {
    this.behaviourFigures = {
      response: decodeHistogram(parts.response),
      stop: decodeHistogram(parts.stop),
      cancel: decodeHistogram(parts.cancel),
      pauses: parts.pauses,
      takeovers: parts.takeovers,
      backchannels: parts.backchannels,
      yields: parts.yields,
    };
  }

  /** What each session tells the exposition: its end, and each response as it finishes. */
  hooks(): Pick<SessionContext, 'onSessionEnd' | 'onResponse' | 'onFirstOutput'> {
    return {
      onSessionEnd: (r) => this.sessions.ended(r.completed, r.reason),
      // TTFT and TTFP as each arrives (the client's own, from response.created received); RTF once the response ends.
      onFirstOutput: (figure, ms) => this.responses.first(figure, ms),
      onResponse: (r) => this.responses.add({ ttft_ms: null, ttfp_ms: null, rtf: r.rtf }),
    };
  }

  /** Pushes the final counts (OTLP), then serves `seconds` more (/metrics) or until `cut` (an interrupt); then closes. */
  async lingerThenClose(seconds: number, cut: Promise<unknown>, say: (line: string) => void): Promise<void> {
    await this.closePush(say);
    if (!this.endpoint) return;
    if (seconds > 0) say(`metrics: serving the final counts ${seconds} s more (--metrics-linger-s; Ctrl-C ends it)`);
    await this.endpoint.linger(seconds, cut);
    await this.close();
  }

  async close(): Promise<void> {
    await this.closePush(() => undefined);
    await this.endpoint?.close();
    this.endpoint = null;
  }

  private async closePush(say: (line: string) => void): Promise<void> {
    const push = this.push;
    this.push = null;
    if (!push) return;
    const r = await push.close();
    if (r.failures > 0) say(`otlp: ${r.failures} push(es) failed, ${r.exports} delivered (first: ${r.first_failure})`);
  }

  private familiesOf(): Family[] {
    const m = this.measures;
    return [
      ...duplexFamilies({
        packets: () => m.pacing,
        deviation: m.pacing.deviation,
        streams: () => ({ started: m.overlap.opened, active: m.overlap.active }),
        sessions: this.sessions,
        responses: this.responses,
        behaviour: () => this.behaviourFigures,
      }),
      ...clientFamilies({ loopLag: () => m.loop.histogram, gc: () => m.gc, backlogBytes: this.backlogBytes }),
    ];
  }
}
