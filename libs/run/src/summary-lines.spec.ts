import type { RunSummary } from '@duplex-bench/results';
import type { StallsSummary } from '@duplex-bench/telemetry';
import { renderArrivals, renderRunSummary, renderStalls, rssGrowthText } from './summary-lines';
import type { RunVerdict } from './verdict';

const figures = { p50: 1, p90: 2, p99: 3, p99_9: 4, max: 5 };

/** A finished run's summary with only what the lines read. */
function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    sessions: { started: 4, completed: 3, incomplete: 1, incomplete_reasons: { server_closed: 1 }, with_violation: 0 },
    packets: { sent: 60, late: 0 },
    packet_ms: 80,
    pacing_deviation_ms: figures,
    websocket_send_ms: figures,
    append_span_ms: figures,
    event_loop_lag_ms: { ...figures, over_80ms: 0 },
    gc_pause_ms: { count: 2, total: 3, max: 2 },
    cpu_cores: { total: 0.25, user: 0.2, system: 0.05 },
    cpu_us_per_packet: 101.5,
    peak_rss_bytes: 96 * 2 ** 20,
    peak_overlapping_streams: 4,
    events: { server_errors: 0, server_error_codes: {}, unknown: {} },
    ...over,
  } as unknown as RunSummary;
}

const qualified: RunVerdict = { verdict: 'qualified', reason: null };

describe('renderRunSummary', () => {
  it('counts sessions with their reasons and packets, and ends with the verdict', () => {
    const lines = renderRunSummary(summary(), '/out', qualified).split('\n');
    expect(lines[0]).toBe('sessions: 4 started, 3 completed, 1 incomplete (server_closed 1), 0 with a late packet');
    expect(lines[1]).toBe('packets: 60 sent, 0 late (|deviation| > 80 ms)');
    expect(lines).toContain('written to /out');
    expect(lines.at(-1)).toBe('QUALIFIED: every packet within one packet interval of its schedule; this run measures the server');
    expect(lines.find((l) => l.startsWith('client CPU'))).toMatch(/^client CPU: 0\.25 cores \(user 0\.20, system 0\.05\), 101\.5 µs per packet cycle; peak RSS 96 MiB/);
  });

  it('names the late packets of an unqualified run, and a run that sent nothing', () => {
    const late = renderRunSummary(summary({ packets: { sent: 60, late: 3 }, sessions: { started: 4, completed: 4, incomplete: 0, incomplete_reasons: {}, with_violation: 2 } } as Partial<RunSummary>), '/o', { verdict: 'unqualified', reason: null });
    expect(late.split('\n').at(-1)).toBe('UNQUALIFIED: 3 late packet(s) in 2 session(s); the client missed its cadence, so this run is not a server measurement');
    const none = renderRunSummary(summary({ packets: { sent: 0, late: 0 } }), '/o', { verdict: 'unqualified', reason: null });
    expect(none.split('\n').at(-1)).toBe('UNQUALIFIED: no packet was sent: every session ended before streaming (server_closed 1); nothing was measured');
  });

  it('puts server error codes and the camera line before "written to", and a failed run says why', () => {
    const s = summary({ events: { server_errors: 2, server_error_codes: { rate_limited: 2 }, unknown: {}, dialect: { receipt_seq_repeated: 3, receipt_seq_skipped: 0 } }, video: { source: 'frames/', frames_sent: 10, frame_bytes: 2048 } } as unknown as Partial<RunSummary>);
    const lines = renderRunSummary(s, '/o', { verdict: 'failed', reason: 'no session completed' }).split('\n');
    const written = lines.indexOf('written to /o');
    expect(lines.indexOf('server error events: rate_limited 2 (a native session ends at its first)')).toBeLessThan(written);
    expect(lines.indexOf('server receipts out of order: 3 repeated a seq, 0 seq skipped (sglang-omni accepts each append once, in order; the sessions went on, as its client does)')).toBeGreaterThan(0);
    expect(renderRunSummary(summary(), '/o', qualified)).not.toMatch(/receipts out of order/);
    expect(lines.indexOf('camera frames (frames/): 10 sent, 2.0 KiB of JPEG')).toBeLessThan(written);
    expect(lines.at(-1)).toBe('FAILED: no session completed');
  });
});

describe('the other lines', () => {
  it('gives the RSS growth only when one was measured', () => {
    expect(rssGrowthText(undefined)).toBe('');
    expect(rssGrowthText({ growth_mib_per_min: 0.12, from_s: 60, span_s: 540 } as never)).toBe(', RSS +0.12 MiB/min from 60 s over 540 s (client, least-squares slope)');
  });

  it('counts stalls by cause, leaving out causes never seen', () => {
    const st = { threshold_ms: 50, count: 2, by_cause: { gc: 1, disk_wait: 1, cpu_wait: 0 }, sampler: null } as unknown as StallsSummary;
    expect(renderStalls(st)).toBe('client loop stalls over 50 ms: 2 (gc 1, disk_wait 1); no sampler account');
  });

  it('states an arrival run in Erlangs, with the blocking probability and its interval', () => {
    const lat = { count: 3, p50: 1, p99: 2, max: 3 };
    const lines = renderArrivals({
      process: 'poisson', rate_per_s: 4, run_for_s: 10, session_duration: 'fixed:2', offered_erlangs: 8,
      arrived: 40, started: 38, completed: 38, blocked: 2, client_skipped: 0, failed_to_open: 0, peak_in_flight: 9,
      blocking_probability: { rate: 0.05, ci95: [0.0138, 0.1651], count: 40 }, connect_ms: lat, handshake_ms: lat, start_lag_ms: lat,
    } as never);
    expect(lines[0]).toMatch(/^arrivals \(poisson 4\/s for 10 s, sessions fixed:2 s, 8 Erlangs offered\): 40 arrived, 38 started/);
    expect(lines[1]).toBe('  blocking probability 0.0500 [0.0138-0.1651] (n 40) (95% Wilson intervals)');
  });
});
