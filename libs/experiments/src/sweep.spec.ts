import { capacityOf, type SweepPoint } from './sweep';

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
