export { counter, gauge, hdrHistogram, cumulativeCounts } from './families';
export type { Family, Labels, Sample } from './families';
export { MetricsEndpoint } from './metrics-endpoint';
export { exposeMetrics } from './expose';
export type { ExposeOptions } from './expose';
export { LiveSessions, LiveResponses } from './live-recorders';
export type { LiveResponse } from './live-recorders';
export { clientFamilies } from './client-families';
export type { ClientHealthSource } from './client-families';
export { duplexFamilies } from './duplex-families';
export type { DuplexSource, LiveBehaviour } from './duplex-families';
export { httpFamilies } from './http-families';
export type { HttpSource } from './http-families';
export { mockFamilies } from './mock-families';
export type { MockSource } from './mock-families';

export { ServerMetricsScraper, ServerScrapers, KNOWN_SERVER_HISTOGRAMS, besideClient, parseGaugeSelector } from './server-scraper';
export type { ServerMetricsSummary, ServerGaugeFigures, ServerHistogramFigures, ServerFigureKind, ClientFigure, ServerScraperOptions } from './server-scraper';
export { parsePromText } from './prom-text';
export type { PromSample, PromScrape } from './prom-text';
export { bucketsOf, bucketDelta, bucketQuantile } from './histogram-deltas';
export type { Buckets } from './histogram-deltas';

export { OtlpPush, otlpMetrics, GENAI_NAMES, GENAI_DURATION_BUCKETS_S } from './otlp-push';
export type { OtlpPushOptions } from './otlp-push';

export { attributeStalls, poolStalls, stallsSummary } from './stall-causes';
export type { LoopStall, GcPause, StallAttribution, StallCause, StallsSummary, SamplerFooter } from './stall-causes';
export { sampleThread, stateOf, schedstatOf } from './proc-sample';
export type { ThreadSample } from './proc-sample';
export { samplerModule } from './sampler-module';

/* Error types */
export { TelemetryError } from './metrics-endpoint';

export { LiveDashboard, readRow } from './live-dashboard';
export type { DashboardHistogram, DashboardRow, DashboardState, LiveDashboardOptions } from './live-dashboard';
