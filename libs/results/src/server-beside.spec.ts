import type { Stat } from '@duplex-bench/metrics';
import { duplexClientFigures } from './server-beside';
import type { DuplexAggregate } from './summary';

const stat = (count: number, p50: number | null, p99: number | null): Stat => ({ count, mean: p50, p50, p99 });

/** A duplex aggregate with only the three figures the server's histograms are set beside. */
function duplex(origin: Record<string, string>): DuplexAggregate {
  return { ttft_ms: stat(12, 180, 420), ttfp_ms: stat(11, 250.5, 610), rtf: stat(10, 0.4, 0.92), measurement_origin: origin } as DuplexAggregate;
}

describe('the client figures beside the server’s histograms', () => {
  it('is empty for a run with no duplex figures', () => {
    expect(duplexClientFigures(undefined)).toStrictEqual({});
  });

  it('sets TTFT, TTFP and RTF beside the server histograms of their kind, each with its place in the summary, unit and counts', () => {
    const figures = duplexClientFigures(duplex({ ttft_ms: 'client: first text delta', ttfp_ms: 'client: first audio delta', rtf: 'client: response time / audio' }));
    expect(Object.keys(figures).sort()).toEqual(['rtf', 'ttfp', 'ttft']);
    expect(figures.ttft).toEqual({ figure: 'duplex.ttft_ms', unit: 'ms', count: 12, p50: 180, p99: 420, measurement_origin: 'client: first text delta' });
    expect(figures.ttfp).toEqual({ figure: 'duplex.ttfp_ms', unit: 'ms', count: 11, p50: 250.5, p99: 610, measurement_origin: 'client: first audio delta' });
    expect(figures.rtf).toEqual({ figure: 'duplex.rtf', unit: 'ratio', count: 10, p50: 0.4, p99: 0.92, measurement_origin: 'client: response time / audio' });
  });

  it('says the figure is the client’s when the summary gave it no origin', () => {
    const figures = duplexClientFigures(duplex({ ttfp_ms: 'client: first audio delta' }));
    expect(figures.ttft?.measurement_origin).toBe('client');
    expect(figures.rtf?.measurement_origin).toBe('client');
    expect(figures.ttfp?.measurement_origin).toBe('client: first audio delta');
  });

  it('keeps a figure with no value as null, its count zero', () => {
    const d = duplex({});
    d.ttfp_ms = stat(0, null, null);
    expect(duplexClientFigures(d).ttfp).toMatchObject({ count: 0, p50: null, p99: null });
  });
});
