import { decodeFrame } from './frame';
import {
  chunkPeriodMs,
  responseRequestMetrics,
  ServerEventSeqTracker,
  serverEventSeq,
  vllmAppend,
  vllmCommit,
  vllmEventAck,
  vllmHeartbeat,
  mergeFields,
  wavDataUrl,
  vllmPlaybackAck,
  vllmRealtimeUrl,
  vllmSessionClose,
  vllmSessionRates,
  vllmSessionUpdate,
} from './vllm-omni';

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

describe('vLLM-Omni client events (as vllm_omni/clients/duplex.py builds them)', () => {
  it('connects with duplex=1 and the model unless the URL has them, and always autostart=0', () => {
    expect(vllmRealtimeUrl('ws://h:1/v1/realtime', 'm')).toBe('ws://h:1/v1/realtime?duplex=1&model=m&autostart=0');
    expect(vllmRealtimeUrl('ws://h:1', 'm')).toBe('ws://h:1/v1/realtime?duplex=1&model=m&autostart=0');
    // Their client forces autostart=0 over a user's autostart=1: autostart would open a bare session first.
    expect(vllmRealtimeUrl('ws://h:1/v1/realtime?model=x&autostart=1')).toBe('ws://h:1/v1/realtime?model=x&autostart=0&duplex=1');
  });

  it('sends the first session.update with the flat beta keys and the audio block, turn_detection always present', () => {
    const e = JSON.parse(vllmSessionUpdate('u', { model: 'm', input_sample_rate: 16000, output_sample_rate: 24000, turn_detection: 'none' }));
    expect(e).toEqual({
      type: 'session.update',
      event_id: 'u',
      session: {
        model: 'm',
        modalities: ['audio', 'text'],
        input_audio_format: 'pcm16',
        output_audio_format: 'pcm16',
        sample_rate_hz: 16000,
        audio: { input: { sample_rate_hz: 16000 }, output: { sample_rate_hz: 24000 } },
        turn_detection: null,
        overlap_policy: 'listen_only',
        playback_commit_policy: 'ack_only',
        extra_body: { native_duplex: true, force_listen_count: 0, auto_response: true, return_stage_metrics: true },
      },
    });
  });

  it("asks for barge-in on speech and no responses of the model's own when the server's VAD cuts the turns", () => {
    const e = JSON.parse(vllmSessionUpdate('u', { input_sample_rate: 16000, output_sample_rate: 24000, turn_detection: 'server_vad' }));
    expect(e.session.turn_detection).toEqual({ type: 'server_vad' });
    expect(e.session.overlap_policy).toBe('barge_in_on_speech');
    expect(e.session.playback_commit_policy).toBe('ack_only');
    expect(e.session.extra_body).toEqual({ native_duplex: true, force_listen_count: 0, auto_response: false, return_stage_metrics: true });
  });

  it('carries the reference voice as session.ref_audio and merges raw session fields over the rest', () => {
    const ref_audio = wavDataUrl(Buffer.from('RIFF'));
    expect(ref_audio).toBe('data:audio/wav;base64,UklGRg==');
    const e = JSON.parse(
      vllmSessionUpdate('u', { input_sample_rate: 16000, output_sample_rate: 24000, turn_detection: 'none', ref_audio, extra: { extra_body: { native_duplex: false, seed: 1 }, temperature: 0.6 } }),
    );
    expect(e.session.ref_audio).toBe(ref_audio);
    expect(e.session.extra_body).toEqual({ native_duplex: false, force_listen_count: 0, auto_response: true, return_stage_metrics: true, seed: 1 });
    expect(e.session.temperature).toBe(0.6);
    expect(mergeFields({ a: { b: 1, c: 2 }, d: [1] }, { a: { c: 3 }, d: [2] })).toEqual({ a: { b: 1, c: 3 }, d: [2] });
  });

  it('builds appends, the final commit, playback and event acknowledgements and session.close', () => {
    expect(JSON.parse(vllmAppend('a1', Buffer.from('AAAA'), 16000, 80, 160).toString())).toEqual({ type: 'input_audio_buffer.append', audio: 'AAAA', format: 'pcm16', sample_rate_hz: 16000, duration_ms: 80, audio_end_ms: 160, event_id: 'a1' });
    expect(JSON.parse(vllmCommit('c'))).toEqual({ type: 'input_audio_buffer.commit', final: true, event_id: 'c' });
    expect(JSON.parse(vllmPlaybackAck('p', 'r7', 1234.9))).toEqual({ type: 'playback.ack', played_ms: 1234, committed_ms: 1234, response_id: 'r7', item_id: 'item_r7', event_id: 'p' });
    expect(JSON.parse(vllmEventAck(42))).toEqual({ type: 'session.event_ack', server_event_seq: 42 });
    expect(JSON.parse(vllmHeartbeat('h'))).toEqual({ type: 'session.heartbeat', event_id: 'h' });
    expect(JSON.parse(vllmSessionClose('x'))).toEqual({ type: 'session.close', event_id: 'x' });
  });

  it('reads the rates a session states: the audio block, the GA format, or the flat input rate', () => {
    expect(vllmSessionRates({ audio: { input: { sample_rate_hz: 16000 }, output: { sample_rate_hz: 22050 } } })).toEqual({ input: 16000, output: 22050 });
    expect(vllmSessionRates({ audio: { output: { format: { type: 'audio/pcm', rate: 24000 } } }, sample_rate_hz: 16000 })).toEqual({ input: 16000, output: 24000 });
  });
});
