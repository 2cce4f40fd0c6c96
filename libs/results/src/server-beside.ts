import type { ClientFigure, ServerFigureKind } from '@duplex-bench/telemetry';
import type { DuplexAggregate } from './summary';

/** The duplex summary's per-response figures, to set beside the server's histograms of the same kind. */
export function duplexClientFigures(d: DuplexAggregate | undefined): Partial<Record<ServerFigureKind, ClientFigure>> {
  if (!d) return {};
  const of = (key: 'ttft_ms' | 'ttfp_ms' | 'rtf', unit: ClientFigure['unit']): ClientFigure => ({
    figure: `duplex.${key}`,
    unit,
    count: d[key].count,
    p50: d[key].p50,
    p99: d[key].p99,
    measurement_origin: d.measurement_origin[key] ?? 'client',
  });
  return { ttft: of('ttft_ms', 'ms'), ttfp: of('ttfp_ms', 'ms'), rtf: of('rtf', 'ratio') };
}
