import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createUsHistogram } from '@duplex-bench/metrics';
import { clientFamilies } from './client-families';
import { duplexFamilies } from './duplex-families';
import { httpFamilies } from './http-families';
import { LiveResponses, LiveSessions } from './live-recorders';
import { mockFamilies } from './mock-families';

const DASHBOARD = join(__dirname, '..', '..', '..', 'docs', 'telemetry', 'grafana-dashboard.json');

/** Every series name the expositions can serve (a histogram's as its _bucket, _sum and _count). */
function exported(): Set<string> {
  const h = createUsHistogram();
  const families = [
    ...duplexFamilies({ packets: () => ({ sent: 0, late: 0 }), deviation: h, streams: () => ({ started: 0, active: 0 }), sessions: new LiveSessions(), responses: new LiveResponses() }),
    ...httpFamilies({ requests: () => ({ sent: 0, completed: 0, in_flight: 0, late_sends: 0 }), errors: () => ({}), latency: () => ({ ttft: h, itl: h, e2e: h }) }),
    ...clientFamilies({ loopLag: () => h, gc: () => ({ count: 0, total_ms: 0 }), backlogBytes: () => 0 }),
    ...mockFamilies({ counts: () => ({ opened: 0, active: 0, completed: 0, accepted: 0, refused: 0, frames_sent: 0, socket_errors: 0 }) }),
  ];
  return new Set(families.flatMap((f) => (f.type === 'histogram' ? [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`] : [f.name])));
}

describe('the Grafana dashboard', () => {
  it('queries only names the expositions serve, and draws pacing, sessions, latencies and client health', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    const used = new Set(exprs.flatMap((e) => e.match(/duplex_bench_[a-z0-9_]+/g) ?? []));
    const names = exported();
    expect([...used].filter((n) => !names.has(n))).toEqual([]);
    for (const needed of ['duplex_bench_packets_late_total', 'duplex_bench_pacing_deviation_seconds_bucket', 'duplex_bench_sessions_active', 'duplex_bench_response_ttfp_seconds_bucket', 'duplex_bench_event_loop_lag_seconds_bucket', 'duplex_bench_request_ttft_seconds_bucket']) {
      expect(used).toContain(needed);
    }
  });
});
