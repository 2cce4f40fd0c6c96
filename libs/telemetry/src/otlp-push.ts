// Types only at the top: the SDK loads when a command pushes (`OtlpPush.start`), never otherwise.
import type { Attributes, HrTime } from '@opentelemetry/api';
import type { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import type { CollectionResult, MeterProvider, MetricData, MetricProducer, PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { cumulativeCounts, type Family, type Labels } from './families';

/**
 * Where the OpenTelemetry GenAI semantic conventions name a figure
 * (open-telemetry/semantic-conventions-genai, docs/gen-ai/gen-ai-metrics.md, client metrics), the
 * OTLP push uses that name, its unit and its bucket boundaries. Every other family keeps its
 * Prometheus name without the `_total` and unit suffixes, which an OTLP-to-Prometheus bridge puts back.
 */
export const GENAI_NAMES: Record<string, { name: string; meaning: string }> = {
  duplex_bench_request_e2e_seconds: { name: 'gen_ai.client.operation.duration', meaning: 'GenAI operation duration' },
  duplex_bench_request_ttft_seconds: { name: 'gen_ai.client.operation.time_to_first_chunk', meaning: 'time to receive the first chunk of the response stream' },
  duplex_bench_request_inter_chunk_seconds: { name: 'gen_ai.client.operation.time_per_output_chunk', meaning: 'time per output chunk, for each chunk after the first' },
};

/** The conventions' ExplicitBucketBoundaries for those three, seconds. */
export const GENAI_DURATION_BUCKETS_S = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/** Buckets of the other histograms on OTLP: the same decades the exposition's histograms span. */
const DEFAULT_BUCKETS_S = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30];

function otelName(family: Family): { name: string; unit: string } {
  const genai = GENAI_NAMES[family.name];
  if (genai) return { name: genai.name, unit: 's' };
  let name = family.name.replace(/_total$/, '');
  let unit = '1';
  if (name.endsWith('_seconds')) {
    name = name.slice(0, -'_seconds'.length);
    unit = 's';
  } else if (name.endsWith('_bytes')) {
    name = name.slice(0, -'_bytes'.length);
    unit = 'By';
  }
  return { name, unit };
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** The families as OTLP metric data, cumulative from `start_ms` (epoch) to now. */
export async function otlpMetrics(families: Family[], attributes: Attributes, start_ms: number): Promise<MetricData[]> {
  const { ValueType } = await import('@opentelemetry/api');
  const { AggregationTemporality, DataPointType } = await import('@opentelemetry/sdk-metrics');
  const startTime = hrTime(start_ms);
  const endTime = hrTime(Date.now());
  const out: MetricData[] = [];
  for (const f of families) {
    const { name, unit } = otelName(f);
    const descriptor = { name, description: f.help, unit, valueType: ValueType.DOUBLE };
    if (f.type === 'histogram' && f.hdr) {
      const h = f.hdr.read();
      const boundaries = GENAI_NAMES[f.name] ? GENAI_DURATION_BUCKETS_S : name.endsWith('_rtf') ? [0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 4] : DEFAULT_BUCKETS_S;
      const { counts: cumulative, sum } = h ? cumulativeCounts(h, boundaries.map((b) => Math.round(b * (f.hdr?.scale ?? 1e6)))) : { counts: boundaries.map(() => 0), sum: 0 };
      const count = h?.totalCount ?? 0;
      // OTLP buckets count each bucket on its own (the last one above the top boundary), not cumulatively.
      const counts = [...cumulative, count].map((c, i, all) => c - (i > 0 ? all[i - 1] : 0));
      const scale = f.hdr.scale;
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: [
          {
            startTime,
            endTime,
            attributes,
            // No `min`: HDR keeps only the smallest non-zero value, and the loop lag records zeros.
            value: { buckets: { boundaries, counts }, sum: sum / scale, count, ...(h && count > 0 ? { max: h.maxValue / scale } : {}) },
          },
        ],
      });
      continue;
    }
    const got = await f.get();
    const dataPoints = got.values.map((v) => ({ startTime, endTime, attributes: { ...attributes, ...v.labels }, value: v.value }));
    if (f.type === 'counter') out.push({ descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints });
    else out.push({ descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.GAUGE, dataPoints });
  }
  return out;
}

/** Counts what the exporter could not deliver; the run goes on. */
class CountingExporter implements PushMetricExporter {
  failures = 0;
  firstFailure: string | null = null;
  exports = 0;

  constructor(
    private readonly inner: OTLPMetricExporter,
    private readonly onFirstFailure: (message: string) => void,
  ) {}

  export(metrics: ResourceMetrics, done: Parameters<PushMetricExporter['export']>[1]): void {
    this.inner.export(metrics, (result) => {
      if (result.code === 0) this.exports++;
      else {
        this.failures++;
        if (this.firstFailure === null) {
          this.firstFailure = result.error?.message ?? 'export failed';
          this.onFirstFailure(this.firstFailure);
        }
      }
      done(result);
    });
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export interface OtlpPushOptions {
  /** OTLP/HTTP base (`http://host:4318`) or the metrics URL itself (`…/v1/metrics`). */
  endpoint: string;
  interval_s: number;
  families: Family[];
  /** The exposition's labels (command, protocol, process) and the conventions' attributes, on every point. */
  labels: Labels;
  /** `service.name` and the like. */
  resource: Record<string, string>;
  say(line: string): void;
}

/**
 * `--otlp-endpoint`: the exposition's families pushed as OTLP/HTTP metrics every `interval_s`
 * through the OpenTelemetry SDK's periodic reader (its JSON encoding), and once more at the end.
 * The families are read at each push, as a scrape reads them: nothing is recorded twice.
 */
export class OtlpPush {
  private constructor(
    private readonly provider: MeterProvider,
    private readonly exporter: CountingExporter,
  ) {}

  static async start(o: OtlpPushOptions): Promise<OtlpPush> {
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    const { resourceFromAttributes } = await import('@opentelemetry/resources');
    const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const url = /\/v1\/metrics\/?$/.test(new URL(o.endpoint).pathname) ? o.endpoint : `${o.endpoint.replace(/\/$/, '')}/v1/metrics`;
    const start_ms = Date.now();
    const attributes: Attributes = Object.fromEntries(Object.entries(o.labels).map(([k, v]) => [k, v]));
    const producer: MetricProducer = {
      async collect(): Promise<CollectionResult> {
        const metrics = await otlpMetrics(o.families, attributes, start_ms);
        return { resourceMetrics: { resource: resourceFromAttributes({}), scopeMetrics: [{ scope: { name: 'duplex-bench' }, metrics }] }, errors: [] };
      },
    };
    // A push is bounded by the interval (the SDK's reader requires it), and by 10 s.
    const timeout_ms = Math.min(10_000, o.interval_s * 1000);
    const exporter = new CountingExporter(new OTLPMetricExporter({ url, timeoutMillis: timeout_ms }), (message) =>
      o.say(`otlp: push to ${url} failed (${message}); counted, the run goes on`),
    );
    const reader = new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: o.interval_s * 1000,
      exportTimeoutMillis: timeout_ms,
      metricProducers: [producer],
    });
    return new OtlpPush(new MeterProvider({ resource: resourceFromAttributes(o.resource), readers: [reader] }), exporter);
  }

  /** Pushes the final figures now, then stops; says what could not be delivered. */
  async close(): Promise<{ exports: number; failures: number; first_failure: string | null }> {
    // Shutting down exports once more, the final counts.
    await this.provider.shutdown().catch(() => undefined);
    return { exports: this.exporter.exports, failures: this.exporter.failures, first_failure: this.exporter.firstFailure };
  }
}
