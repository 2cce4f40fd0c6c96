import { decodeFrame } from './frame';
import { chunkPeriodMs, responseRequestMetrics, ServerEventSeqTracker, serverEventSeq } from './vllm-omni';

describe('vLLM-Omni extensions', () => {
  it('reads chunk_period_ms from session.created capabilities, and nothing from a plain session', () => {
    expect(chunkPeriodMs({ type: 'session.created', session: { capabilities: { chunk_period_ms: 500 } } })).toBe(500);
    expect(chunkPeriodMs({ type: 'session.created', capabilities: { chunk_period_ms: 160 } })).toBe(160);
    expect(chunkPeriodMs({ type: 'session.created', session: {} })).toBeUndefined();
    expect(chunkPeriodMs({ type: 'session.created', session: { capabilities: { chunk_period_ms: -1 } } })).toBeUndefined();
  });

  it('reads server_event_seq from a large frame without parsing it', () => {
    const big = `{"type":"response.output_audio.delta","delta":"${'A'.repeat(4000)}","server_event_seq":1234}`;
    const frame = decodeFrame(big);
    expect(serverEventSeq(frame)).toBe(1234);
    expect(serverEventSeq(decodeFrame('{"type":"x","server_event_seq": 7}'))).toBe(7);
    expect(serverEventSeq(decodeFrame('{"type":"x"}'))).toBeUndefined();
    // Before the payload is found too; a large frame is not searched in its middle.
    const head = `{"type":"response.output_audio.delta","server_event_seq":9,"delta":"${'A'.repeat(4000)}"}`;
    expect(serverEventSeq(decodeFrame(head))).toBe(9);
    const middle = `{"type":"response.output_audio.delta","delta":"${'A'.repeat(2000)}","server_event_seq":5,"pad":"${'B'.repeat(2000)}"}`;
    expect(serverEventSeq(decodeFrame(middle))).toBeUndefined();
  });

  it('counts gaps and missing events, and numbers that do not rise', () => {
    const t = new ServerEventSeqTracker();
    for (const n of [1, 2, 3, 6, 7, 7, 9]) t.add(n);
    t.add(undefined);
    expect(t).toMatchObject({ seen: 7, gaps: 2, missing_events: 3, not_rising: 1 });
  });

  it('reads response_request_metrics from delta metadata and from response.created', () => {
    const delta = decodeFrame(
      JSON.stringify({
        type: 'response.output_audio_transcript.delta',
        delta: 'hi',
        metadata: { vllm_omni: { response_request_metrics: { ttft_ms: 120, ttfp_ms: 175, source: 'server_monotonic_request_start', measurement_origin: { ttft: 'request start to first text' } } } },
      }),
    );
    expect(responseRequestMetrics(delta)).toEqual({
      ttft_ms: 120,
      ttfp_ms: 175,
      source: 'server_monotonic_request_start',
      measurement_origin: { ttft: 'request start to first text' },
    });
    const created = decodeFrame(
      JSON.stringify({ type: 'response.created', response: { id: 'r', metadata: { duplex_event: { response_request_metrics: { ttfp_ms: 90 } } } } }),
    );
    expect(responseRequestMetrics(created)).toEqual({ ttfp_ms: 90, ttft_ms: undefined });
    expect(responseRequestMetrics(decodeFrame('{"type":"response.created","response":{"id":"r"}}'))).toBeUndefined();
  });
});
