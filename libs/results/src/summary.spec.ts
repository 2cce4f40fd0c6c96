import { ResponseTracker } from '@duplex-bench/metrics';
import { duplexMetrics, vllmOmniFigures, type DuplexSession } from './summary';

const RATE = 24000;

/** A session with one response whose first audio comes `ttfp_ms` after response.created; the server's own TTFP when given. */
function session(id: string, completed: boolean, ttfp_ms: number, server_ttfp_ms?: number, finished = true): DuplexSession {
  const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
  t.add({ kind: 'response_created', t_s: 1, response_id: 'r' });
  t.add({ kind: 'audio_delta', t_s: 1 + ttfp_ms / 1000, response_id: 'r', bytes: 3840, duration_ms: 80 });
  if (server_ttfp_ms !== undefined) t.add({ kind: 'server_metrics', t_s: 1.2, response_id: 'r', ttfp_ms: server_ttfp_ms });
  if (finished) t.add({ kind: 'response_done', t_s: 1.5, response_id: 'r' });
  return { id, completed, ...(completed ? {} : { reason: 'server_closed' as const }), responses: t.done, response_metrics: t.metrics() };
}

describe('duplexMetrics', () => {
  it('pools complete sessions only; incomplete ones are reported apart, counted by reason', () => {
    const out = duplexMetrics([session('a', true, 100), session('b', true, 120), session('c', false, 900)]);
    const d = out?.aggregate;
    expect(d?.sessions).toBe(2);
    expect(d?.ttfp_ms).toMatchObject({ count: 2, p99: 120 });
    expect(d?.incomplete).toMatchObject({ sessions: 1, responses: 1, reasons: { server_closed: 1 }, ttfp_ms: { count: 1, p50: 900 } });
    // The per-session file keeps every answered session, each saying whether it completed.
    expect((out?.file.duplex_session_metrics as Array<{ completed: boolean }>).map((s) => s.completed)).toEqual([true, true, false]);
  });

  it("never pools the server's own figures with the client's: separate blocks, each with its count", () => {
    const d = duplexMetrics([session('a', true, 100, 40), session('b', true, 120)])?.aggregate;
    expect(d?.ttfp_ms).toMatchObject({ count: 2, p50: 100, p99: 120 });
    expect(d?.server_ttfp_ms).toMatchObject({ count: 1, p50: 40 });
    expect(d?.server_ttft_ms).toBeUndefined();
    expect(d?.measurement_origin.ttfp_ms).toMatch(/^client:/);
    expect(d?.measurement_origin.server_ttfp_ms).toContain('server clock');
  });

  it('keeps a session the server answered without a finished response in the stream figures', () => {
    const d = duplexMetrics([session('a', true, 100), session('b', true, 300, undefined, false)])?.aggregate;
    expect(d).toMatchObject({ sessions: 2, sessions_answered: 2, responses: 1, responses_unfinished: 1 });
    expect(d?.duplex_stream_ttfp_ms.count).toBe(2);
  });
});

describe('vllmOmniFigures', () => {
  it("counts the refused racing acks of every session, an incomplete one's too", () => {
    const raced = (s: DuplexSession, n: number) => ({ ...s, dialect_events: { playback_ack_too_late: n } });
    const v = vllmOmniFigures([raced(session('a', true, 100), 2), session('b', true, 120), raced(session('c', false, 900), 1)]);
    expect(v?.playback_ack_too_late).toBe(3);
    expect(v?.audio_turn_count).toBe(2);
  });
});
