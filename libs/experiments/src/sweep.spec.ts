import { capacityOf, pooledBlocking, type SweepPoint, type SweepRun } from './sweep';

const point = (sessions: number, verdict: SweepPoint['verdict']): SweepPoint => ({ sessions, runs: [], verdict });

describe('capacityOf', () => {
  it('is the largest pass below the first failure, with that range', () => {
    const c = capacityOf([point(8, 'pass'), point(16, 'pass'), point(32, 'fail'), point(24, 'pass'), point(28, 'fail')], 8, 64);
    expect(c).toMatchObject({ sessions: 24, range: [24, 28], limited_by: 'server' });
  });

  it('ignores a pass above the first failure (a noisy count does not raise the capacity)', () => {
    expect(capacityOf([point(8, 'pass'), point(16, 'fail'), point(24, 'pass')], 8, 64)).toMatchObject({ sessions: 8, range: [8, 16] });
  });

  it('never names the server when the client fell behind first', () => {
    const c = capacityOf([point(8, 'pass'), point(16, 'client-limited'), point(32, 'fail')], 8, 64);
    expect(c).toMatchObject({ sessions: 8, range: [8, null], limited_by: 'client' });
  });

  it('says the search range ran out when every count passed', () => {
    expect(capacityOf([point(8, 'pass'), point(16, 'pass')], 8, 16)).toMatchObject({ sessions: 16, limited_by: 'search range' });
  });

  it('has no capacity when the smallest count failed', () => {
    expect(capacityOf([point(8, 'fail')], 8, 64)).toMatchObject({ sessions: null, range: [null, 8] });
  });
});

describe('capacityOf, an arrival sweep', () => {
  const rate = (rate_per_s: number, verdict: SweepPoint['verdict']): SweepPoint => ({ rate_per_s, offered_erlangs: rate_per_s / 2, runs: [], verdict });

  it('names the largest passing rate and its offered Erlangs, the range in rates', () => {
    const c = capacityOf([rate(6, 'pass'), rate(12, 'pass'), rate(24, 'fail'), rate(18, 'pass'), rate(21, 'fail')], 6, 48);
    expect(c).toMatchObject({ sessions: null, rate_per_s: 18, offered_erlangs: 9, range: [18, 21], limited_by: 'server', note: 'passes at 18/s, fails at 21/s' });
  });

  it('never names the server when the client fell behind first', () => {
    expect(capacityOf([rate(6, 'pass'), rate(12, 'client-limited'), rate(24, 'fail')], 6, 48)).toMatchObject({ rate_per_s: 6, limited_by: 'client' });
  });
});

describe('pooledBlocking', () => {
  const run = (count: number, blocked: number): SweepRun => ({
    dir: '',
    processes: 1,
    sessions_run: count - blocked,
    code: 0,
    qualified: true,
    slo: [],
    arrivals: { offered_erlangs: 9, count, blocked, client_skipped: 0, over: 'steady', blocking_probability: { rate: blocked / count, count, ci95: null } },
  });

  it('sums refusals and arrivals over the runs, with the Wilson interval of the sums', () => {
    const b = pooledBlocking([run(300, 3), run(100, 5)]);
    expect(b).toMatchObject({ rate: 0.02, count: 400 });
    const [low, high] = b?.ci95 ?? [1, 0];
    expect(low).toBeLessThan(0.02);
    expect(high).toBeGreaterThan(0.02);
  });

  it('is null for runs without an arrivals block', () => {
    expect(pooledBlocking([{ ...run(1, 0), arrivals: undefined }])).toBeNull();
  });
});
