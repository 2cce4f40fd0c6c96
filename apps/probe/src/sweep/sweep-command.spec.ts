import { parseSlo, type SweepFile, type SweepPoint, type SweepRun } from '@duplex-bench/experiments';
import { renderSweep } from './sweep-command';

const run = (over: Partial<SweepRun> = {}): SweepRun => ({ dir: '/out/s8-r1', processes: 1, sessions_run: 8, code: 0, qualified: true, slo: [], ...over });

function sweep(points: SweepPoint[], capacity: Partial<SweepFile['capacity']>, arrivals?: SweepFile['settings']['arrivals']): SweepFile {
  return {
    format: 'duplex-bench.sweep',
    version: 1,
    settings: { url: 'ws://127.0.0.1:1/v1/realtime', target: 'server', protocol: 'native', duration_s: 4, runs: 1, slo: 'ttfp_p99_ms<=500', run_args: '', processes: 1, max_processes: 1, ...(arrivals ? { arrivals } : {}) },
    points,
    capacity: { sessions: null, range: [null, null], limited_by: null, note: '', ...capacity },
    interrupted: false,
    measurement_origin: {},
  };
}

describe('the sweep lines', () => {
  const terms = parseSlo('ttfp_p99_ms<=500');

  it('lists the counts in load order with each run’s SLO value, then the capacity and where sweep.json is', () => {
    const text = renderSweep(
      sweep(
        [
          { sessions: 16, runs: [run({ slo: [{ term: terms[0].text, value: 720, ok: false }] })], verdict: 'fail' },
          { sessions: 8, runs: [run({ slo: [{ term: terms[0].text, value: 310, ok: true }] })], verdict: 'pass', client_limited_at_processes: [1] },
        ],
        { sessions: 8, range: [8, 16], limited_by: 'server', note: 'the SLO failed at 16' },
      ),
      terms,
      8,
      '/out',
    ).split('\n');
    expect(text[0]).toMatch(/^sessions\s+processes\s+verdict\s+qualified runs\s+ttfp_p99_ms<=500$/);
    // 8 before 16, whatever order they were measured in; a count the client fell behind on says at how many processes.
    expect(text[1]).toMatch(/^8\s+1 \(behind\), 1\s+pass\s+1 of 1\s+310$/);
    expect(text[2]).toMatch(/^16\s+1\s+fail\s+1 of 1\s+720$/);
    expect(text[3]).toBe('capacity: 8 sessions (server: the SLO failed at 16)');
    expect(text[4]).toBe('written to /out/sweep.json');
  });

  it('says the capacity lies below the smallest count when that one failed', () => {
    const text = renderSweep(sweep([{ sessions: 8, runs: [run()], verdict: 'fail' }], { sessions: null, range: [null, 8], limited_by: 'server', note: 'the first count failed' }), terms, 8, '/out');
    expect(text).toContain('capacity: below 8 sessions (the first count failed)');
  });

  it('gives an arrival sweep’s rates, Erlangs and blocking, and its capacity as a rate', () => {
    const point: SweepPoint = { rate_per_s: 2, offered_erlangs: 8, blocking_probability: { rate: 0.004, ci95: [0.001, 0.012] } as SweepPoint['blocking_probability'], runs: [run()], verdict: 'pass' };
    const text = renderSweep(sweep([point], { rate_per_s: 2, offered_erlangs: 8, range: [2, 4], limited_by: 'server', note: 'blocking passed 1% at 4/s' }, { max_blocking: 0.01, seed: 1 }), [], 1, '/out').split('\n');
    expect(text[0]).toMatch(/^rate\/s\s+Erlangs\s+blocking \(95%\)\s+verdict\s+qualified runs$/);
    expect(text[1]).toMatch(/^2\s+8\s+0\.004 \(0\.001\.\.0\.012\)\s+pass\s+1 of 1$/);
    expect(text[2]).toBe('capacity: 2 sessions/s, 8 Erlangs offered (server: blocking passed 1% at 4/s)');
  });
});
