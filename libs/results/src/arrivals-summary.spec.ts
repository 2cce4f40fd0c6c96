import { createUsHistogram, recordMs, wilson95 } from '@duplex-bench/metrics';
import { arrivalsSummary, blockingProbability } from './arrivals-summary';

describe('the arrivals block', () => {
  it('takes blocking over the arrivals the client started, with their Wilson interval', () => {
    // 200 arrived, 10 skipped by the client: 47 blocked of 190 offered to the server.
    const b = blockingProbability({ arrived: 200, client_skipped: 10, started: 143, blocked: 47, failed_to_open: 0 });
    expect(b).toEqual({ rate: 0.2474, count: 190, ci95: wilson95(47, 190) });
    expect(blockingProbability({ arrived: 3, client_skipped: 3, started: 0, blocked: 0, failed_to_open: 0 })).toEqual({ rate: null, count: 0, ci95: null });
  });

  it('states offered Erlangs from the stated mean, the steady part apart, and latencies in ms', () => {
    const connect = createUsHistogram();
    recordMs(connect, 1.5);
    const counts = { arrived: 160, client_skipped: 0, started: 122, blocked: 38, failed_to_open: 0 };
    const a = arrivalsSummary({
      process: 'poisson', rate_per_s: 4, run_for_s: 40, seed: 1, session_duration: 'exp:2', mean_session_s: 2, max_in_flight: 1024, peak_in_flight: 12, completed: 122,
      counts, steady: { from_s: 4, counts: { ...counts, arrived: 140, blocked: 36, started: 104 } },
      connect, handshake: createUsHistogram(), start_lag: createUsHistogram(),
    });
    expect(a).toMatchObject({ offered_erlangs: 8, arrived: 160, blocked: 38, completed: 122, blocking_probability: { count: 160, ci95: wilson95(38, 160) } });
    expect(a.steady).toMatchObject({ from_s: 4, arrived: 140, blocking_probability: { rate: 0.2571, ci95: wilson95(36, 140) } });
    expect(a.connect_ms).toMatchObject({ count: 1, p50: 1.5 });
    expect(a.handshake_ms.count).toBe(0);
    expect(Object.keys(a.measurement_origin)).toEqual(expect.arrayContaining(['blocking_probability', 'connect_ms', 'handshake_ms', 'start_lag_ms', 'offered_erlangs']));
  });
});
