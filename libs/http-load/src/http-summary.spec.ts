import { LatencyHistograms, PerSecond } from './http-summary';
import { newRecord } from './request-record';

describe('LatencyHistograms.recordRequest', () => {
  it("times TTFT and E2E from the end of the client's queue; TTST, TPOT, guidellm's TPOT and tokens/s per user per request", () => {
    const h = new LatencyHistograms(false, true);
    // Meant for 10 s, let go at 10.5 s, first output 10.6, second 10.61, last 10.7 after 11 tokens, end 10.72.
    h.recordRequest({ ...newRecord(0, 10), dispatched_s: 10.5, first_byte_s: 10.55, first_token_s: 10.6, second_token_s: 10.61, last_token_s: 10.7, end_s: 10.72, tokens: 11 }, true);
    const f = h.figures();
    expect(f.ttft.raw.p50).toBeCloseTo(100, 0);
    expect(f.e2e.raw.p50).toBeCloseTo(220, 0);
    expect(f.first_byte.raw.p50).toBeCloseTo(50, 0);
    expect(f.ttst.raw.p50).toBeCloseTo(10, 1);
    expect(f.tpot.raw.p50).toBeCloseTo(10, 1);
    expect(f.time_per_output_token.raw.p50).toBeCloseTo(200 / 11, 1);
    expect(f.client_queue.raw.p50).toBeCloseTo(500, 0);
    expect(f.e2e_including_queue.raw.p50).toBeCloseTo(720, 0);
    expect(h.rates().output_tokens_per_s_per_user.raw.p50).toBeCloseTo(100, 0);
  });

  it('without a client queue, no queue figures; a failed request records nothing', () => {
    const h = new LatencyHistograms(false, false);
    h.recordRequest({ ...newRecord(0, 1), dispatched_s: 1, first_token_s: 1.1, last_token_s: 1.1, end_s: 1.2, tokens: 1 }, true);
    h.recordRequest({ ...newRecord(1, 1), dispatched_s: 1, end_s: 1.2, error: 'reset' }, true);
    const f = h.figures();
    expect(f.client_queue.raw.count).toBe(0);
    expect(f.e2e.raw.count).toBe(1);
    // One token: no TTST, TPOT or per-user rate.
    expect(f.ttst.raw.count).toBe(0);
    expect(f.tpot.raw.count).toBe(0);
    expect(f.time_per_output_token.raw.count).toBe(1);
  });
});

describe('PerSecond', () => {
  it('counts into seconds since the origin; every series ends as long as the longest', () => {
    const p = new PerSecond(100);
    p.add('offered', 100.2);
    p.add('offered', 100.9);
    p.add('output_chunks', 102.5, 3);
    p.add('completed', 99.9); // before the origin: the first second
    const s = p.done();
    expect(s.offered).toEqual([2, 0, 0]);
    expect(s.output_chunks).toEqual([0, 0, 3]);
    expect(s.completed).toEqual([1, 0, 0]);
    expect(s.failed).toEqual([0, 0, 0]);
  });
});
