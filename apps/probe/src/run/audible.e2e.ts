import { startMockServer } from '@duplex-bench/mock-servers';
import { probe } from './run-harness.spec-helpers';

jest.setTimeout(60_000);

describe('audible TTFP against a model that opens each response with silence', () => {
  it('puts audible_ttfp_ms about the leading silence past ttfp_ms (nemotron, 300 ms), with its origin', async () => {
    const mock = await startMockServer({ port: 0, profile: 'nemotron', leading_silence_ms: 300 });
    try {
      const { code, summary } = await probe(mock.url, ['--concurrency', '2', '--duration', '2', '--allow-unqualified']);
      expect(code).toBe(0);
      const duplex = summary.duplex;
      if (!duplex) throw new Error('no duplex block');
      expect(duplex.audible_ttfp_ms.count).toBe(duplex.ttfp_ms.count);
      const gap = (duplex.audible_ttfp_ms.p50 as number) - (duplex.ttfp_ms.p50 as number);
      expect(gap).toBeGreaterThanOrEqual(240);
      expect(gap).toBeLessThanOrEqual(360);
      expect(duplex.measurement_origin.audible_ttfp_ms).toMatch(/first voiced audio as a listener hears it/);
    } finally {
      await mock.close();
    }
  });

  it('gives no audible figure where the model sends only silence', async () => {
    const mock = await startMockServer({ port: 0, profile: 'nemotron' });
    try {
      const { summary } = await probe(mock.url, ['--concurrency', '1', '--duration', '1', '--allow-unqualified']);
      expect(summary.duplex?.ttfp_ms.count).toBe(1);
      expect(summary.duplex?.audible_ttfp_ms.count).toBe(0);
    } finally {
      await mock.close();
    }
  });
});
