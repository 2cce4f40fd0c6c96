import { checkSlo, parseSlo, termLabel } from './slo';
import type { RunSummary } from './summary';

describe('SLO terms', () => {
  it('reads sglang-omni’s unit gates: unit_lag_p95_ms and unit_miss_rate', () => {
    expect(parseSlo('unit_miss_rate<=0.01, unit_lag_p95_ms<=1000')).toEqual([
      { figure: 'unit_miss_rate', op: '<=', bound: 0.01, text: 'unit_miss_rate<=0.01' },
      { figure: 'unit_lag_p95_ms', op: '<=', bound: 1000, text: 'unit_lag_p95_ms<=1000' },
    ]);
    const summary = { unit_lag_ms: { count: 100, p50: 40, p95: 75, p99: 120, max: 300 }, unit_miss_rate: 0.02 } as unknown as RunSummary;
    expect(checkSlo(parseSlo('unit_miss_rate<=0.01,unit_lag_p95_ms<=80'), summary)).toEqual([
      { term: 'unit_miss_rate<=0.01', value: 0.02, ok: false },
      { term: 'unit_lag_p95_ms<=80', value: 75, ok: true },
    ]);
  });

  it('fails a unit term on a run with no units (another dialect, or lockstep)', () => {
    const summary = { sessions: { incomplete: 0 } } as unknown as RunSummary;
    expect(checkSlo(parseSlo('unit_miss_rate<=0.01'), summary)).toEqual([{ term: 'unit_miss_rate<=0.01', value: null, ok: false }]);
  });

  it('does not count an arrival refused at admission as incomplete: that is blocking, judged on its own', () => {
    const sessions = { incomplete: 3, incomplete_reasons: { admission_refused: 2, closed: 1 } };
    expect(checkSlo(parseSlo('incomplete=0'), { sessions, arrivals: {} } as unknown as RunSummary)).toEqual([{ term: 'incomplete=0', value: 1, ok: false }]);
    expect(checkSlo(parseSlo('incomplete<=3'), { sessions } as unknown as RunSummary)).toEqual([{ term: 'incomplete<=3', value: 3, ok: true }]);
  });

  it("judges the client's receive delay p99 where the server stamps its frames, and fails it where none are stamped", () => {
    const stamped = { receive_delay_ms: { count: 5000, p50: 0.4, p90: 0.9, p99: 2.7, p99_9: 4, max: 6 } } as unknown as RunSummary;
    expect(checkSlo(parseSlo('receive_delay_p99_ms<=5'), stamped)).toEqual([{ term: 'receive_delay_p99_ms<=5', value: 2.7, ok: true }]);
    expect(checkSlo(parseSlo('receive_delay_p99_ms<=5'), { receive_delay_ms: null } as unknown as RunSummary)).toEqual([{ term: 'receive_delay_p99_ms<=5', value: null, ok: false }]);
  });

  it('judges a server gauge as gauge:NAME_max|mean|last, read from the summary of a run with --server-gauge NAME', () => {
    const summary = { server_metrics: { gauges: { DCGM_FI_DEV_FB_USED: { kind: 'gauge', n: 9, mean: 10000, max: 14000, last: 9000 }, 'vllm:num_requests_running': { kind: 'gauge', n: 9, mean: 3, max: 8, last: 0 } } } } as unknown as RunSummary;
    const terms = parseSlo('gauge:DCGM_FI_DEV_FB_USED_max<=13000,gauge:DCGM_FI_DEV_FB_USED_mean<=12000,gauge:vllm:num_requests_running_max<=8,gauge:sglang:token_usage_last<=0.9');
    expect(checkSlo(terms, summary)).toEqual([
      { term: 'gauge:DCGM_FI_DEV_FB_USED_max<=13000', value: 14000, ok: false },
      { term: 'gauge:DCGM_FI_DEV_FB_USED_mean<=12000', value: 10000, ok: true },
      { term: 'gauge:vllm:num_requests_running_max<=8', value: 8, ok: true },
      { term: 'gauge:sglang:token_usage_last<=0.9', value: null, ok: false },
    ]);
    expect(termLabel('gauge:DCGM_FI_DEV_FB_USED_max<=13000')).toBe('DCGM_FI_DEV_FB_USED max ≤ 13000');
    expect(() => parseSlo('gauge:DCGM_FI_DEV_FB_USED_p99<=1')).toThrow(/cannot read/);
  });
});

