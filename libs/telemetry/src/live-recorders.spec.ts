import { LiveResponses, LiveSessions } from './live-recorders';

describe('LiveSessions', () => {
  it('counts complete sessions, and incomplete ones by reason (unknown when none is given)', () => {
    const s = new LiveSessions();
    s.ended(true, undefined);
    s.ended(true, 'ignored for a complete session');
    s.ended(false, 'handshake_timeout');
    s.ended(false, 'server_error');
    s.ended(false, 'handshake_timeout');
    s.ended(false, undefined);
    expect(s.completed).toBe(2);
    expect(Object.fromEntries(s.incomplete)).toEqual({ handshake_timeout: 2, server_error: 1, unknown: 1 });
  });
});

describe('LiveResponses', () => {
  it('records TTFT and TTFP in µs, each in its own histogram', () => {
    const r = new LiveResponses();
    r.add({ ttft_ms: 120.5, ttfp_ms: 300, rtf: null });
    r.add({ ttft_ms: 80, ttfp_ms: null, rtf: null });
    expect([r.ttft.totalCount, r.ttfp.totalCount, r.rtf.totalCount]).toEqual([2, 1, 0]);
    expect(r.ttft.maxValue).toBeGreaterThanOrEqual(120_500 * 0.999);
    expect(r.ttft.maxValue).toBeLessThanOrEqual(120_500 * 1.001);
    expect(r.ttfp.maxValue).toBeGreaterThanOrEqual(300_000 * 0.999);
    expect(r.ttfp.maxValue).toBeLessThanOrEqual(300_000 * 1.001);
  });

  it('records RTF as the ratio × 10⁶, so a ratio reads at 10⁻⁶ resolution in a µs histogram', () => {
    const r = new LiveResponses();
    r.add({ ttft_ms: null, ttfp_ms: null, rtf: 0.85 });
    r.add({ ttft_ms: null, ttfp_ms: null, rtf: 0.000_002 });
    expect(r.rtf.totalCount).toBe(2);
    expect(r.rtf.maxValue / 1e6).toBeCloseTo(0.85, 3);
    expect(r.rtf.minNonZeroValue).toBe(2);
  });

  it('skips a missing or negative figure instead of throwing (recordMs throws on a negative), and keeps a zero', () => {
    const r = new LiveResponses();
    expect(() => r.add({ ttft_ms: -3, ttfp_ms: -0.001, rtf: -1 })).not.toThrow();
    r.add({ ttft_ms: null, ttfp_ms: null, rtf: null });
    expect([r.ttft.totalCount, r.ttfp.totalCount, r.rtf.totalCount]).toEqual([0, 0, 0]);
    r.add({ ttft_ms: 0, ttfp_ms: 0, rtf: 0 });
    expect([r.ttft.totalCount, r.ttfp.totalCount, r.rtf.totalCount]).toEqual([1, 1, 1]);
  });
});
