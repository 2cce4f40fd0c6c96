import { ResponseTracker, stat } from './duplex-response';

const RATE = 22050;
const BYTES_80MS = 3528; // 80 ms of PCM16 mono at 22,050 Hz

describe('ResponseTracker', () => {
  it('measures TTFT, TTFP and RTF of a response from response.created', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 10);
    t.add({ kind: 'response_created', t_s: 11, response_id: 'r1' });
    t.add({ kind: 'text_delta', t_s: 11.1, response_id: 'r1', chars: 0 }); // empty: not TTFT
    t.add({ kind: 'text_delta', t_s: 11.25, response_id: 'r1', chars: 5 });
    for (let i = 0; i < 10; i++) t.add({ kind: 'audio_delta', t_s: 11.2 + i * 0.04, response_id: 'r1', bytes: BYTES_80MS });
    t.add({ kind: 'response_done', t_s: 11.7, response_id: 'r1' });
    const [r] = t.done;
    expect(r).toMatchObject({ ttft_origin: 'response.created received', ttfp_origin: 'response.created received' });
    expect(r.ttft_ms).toBeCloseTo(250, 6);
    expect(r.ttfp_ms).toBeCloseTo(200, 6);
    // last audio at 11.56 s, 800 ms of audio: (560 ms) / 800 ms
    expect(r.audio_duration_ms).toBeCloseTo(800, 6);
    expect(r.rtf).toBeCloseTo(0.7, 6);
  });

  it('tells its onFirst of each TTFT and TTFP once, as it arrives, long before the response ends', () => {
    const firsts: Array<[string, number, number]> = [];
    const now = { t: 0 };
    const t = new ResponseTracker({ output_sample_rate: RATE, onFirst: (figure, ms) => firsts.push([figure, Math.round(ms), now.t]) }, 0);
    const at = (t_s: number) => (now.t = t_s);
    t.add({ kind: 'response_created', t_s: at(1), response_id: 'r' });
    t.add({ kind: 'audio_delta', t_s: at(1.8), response_id: 'r', bytes: BYTES_80MS });
    t.add({ kind: 'text_delta', t_s: at(1.9), response_id: 'r', chars: 3 });
    for (let i = 0; i < 100; i++) t.add({ kind: 'audio_delta', t_s: at(2 + i * 0.08), response_id: 'r', bytes: BYTES_80MS });
    t.add({ kind: 'text_delta', t_s: at(3), response_id: 'r', chars: 3 });
    expect(firsts).toEqual([
      ['ttfp', 800, 1.8],
      ['ttft', 900, 1.9],
    ]);
  });

  it("reports the server's own TTFT/TTFP when it sends them, names each origin, and keeps the client's", () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 2, response_id: 'r' });
    t.add({ kind: 'audio_delta', t_s: 2.1, response_id: 'r', bytes: BYTES_80MS, duration_ms: 80 });
    t.add({ kind: 'server_metrics', t_s: 2.1, response_id: 'r', ttfp_ms: 150, measurement_origin: { ttfp: 'request start to first audio' } });
    t.add({ kind: 'text_delta', t_s: 2.15, response_id: 'r', chars: 2 });
    t.add({ kind: 'server_metrics', t_s: 2.15, response_id: 'r', ttft_ms: 170 });
    t.add({ kind: 'response_done', t_s: 2.2, response_id: 'r' });
    const r = t.done[0];
    const server = 'server response_request_metrics';
    expect(r).toMatchObject({ origin_s: 2, ttft_ms: 170, ttfp_ms: 150, ttft_origin: server, ttfp_origin: server });
    expect(r.server_measurement_origin).toEqual({ ttfp: 'request start to first audio' });
    expect(r.client_ttfp_ms).toBeCloseTo(100, 6);
    expect(r.client_ttft_ms).toBeCloseTo(150, 6);
    // RTF stays on the client's receive clock: (2.1 - 2.0) s over 80 ms of audio.
    expect(r.rtf).toBeCloseTo(1.25, 6);
  });

  it('a server that sends only its TTFP leaves TTFT wholly the client figure', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 2, response_id: 'r' });
    t.add({ kind: 'audio_delta', t_s: 2.1, response_id: 'r', bytes: BYTES_80MS, duration_ms: 80 });
    t.add({ kind: 'server_metrics', t_s: 2.1, response_id: 'r', ttfp_ms: 150 });
    t.add({ kind: 'text_delta', t_s: 2.15, response_id: 'r', chars: 2 });
    t.add({ kind: 'response_done', t_s: 2.2, response_id: 'r' });
    const r = t.done[0];
    expect(r).toMatchObject({ ttfp_ms: 150, ttfp_origin: 'server response_request_metrics', ttft_origin: 'response.created received' });
    expect('client_ttft_ms' in r).toBe(false);
    expect(r.ttft_ms).toBeCloseTo(150, 6);
  });

  it('counts a session answered by a response that never finished, and the response as unfinished', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    expect(t.answered).toBe(false);
    t.add({ kind: 'response_created', t_s: 1, response_id: 'r' });
    t.add({ kind: 'audio_delta', t_s: 1.3, response_id: 'r', bytes: BYTES_80MS });
    expect(t.answered).toBe(true);
    expect(t.done).toHaveLength(0);
    expect(t.metrics()).toMatchObject({ responses_unfinished: 1, stream_ttfp_ms: 1300 });
  });

  it("leaves the client's hold on its end of input out of every figure that spans it, and nothing else", () => {
    const figures = (hold: boolean) => {
      const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
      t.add({ kind: 'response_created', t_s: 1, response_id: 'early' });
      t.add({ kind: 'audio_delta', t_s: 1.2, response_id: 'early', bytes: BYTES_80MS });
      t.add({ kind: 'response_done', t_s: 1.3, response_id: 'early' });
      t.add({ kind: 'response_created', t_s: 9, response_id: 'last' });
      t.add({ kind: 'audio_delta', t_s: 9.5, response_id: 'last', bytes: BYTES_80MS });
      // Input played out at 10 s; the client held its end of input until 10.7 s.
      if (hold) t.excludeInputEndHold(10, 10.7);
      t.add({ kind: 'audio_delta', t_s: 11, response_id: 'last', bytes: BYTES_80MS });
      t.add({ kind: 'response_done', t_s: 11.1, response_id: 'last' });
      return { m: t.metrics(), early: t.done[0], last: t.done[1] };
    };
    const held = figures(true);
    const plain = figures(false);
    expect(plain.m.stream_audio_generation_ms).toBeCloseTo(11000, 6);
    expect(held.m.stream_audio_generation_ms).toBeCloseTo(10300, 6);
    expect(held.m.input_end_held_ms).toBeCloseTo(700, 6);
    expect(plain.m.input_end_held_ms).toBeUndefined();
    // The last response spans the hold: 2 s less 0.7 s over 160 ms of audio.
    expect(held.last.rtf).toBeCloseTo(1300 / 160, 6);
    expect(held.last.client_hold_excluded_ms).toBeCloseTo(700, 6);
    expect(plain.last.rtf).toBeCloseTo(2000 / 160, 6);
    // Before the hold nothing changes.
    expect(held.early).toEqual(plain.early);
    expect(held.last.ttfp_ms).toBeCloseTo(500, 6);
  });

  it('weights TPOT by tokens: a step of 3 tokens 30 ms after the first is 10 ms per token', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 1, response_id: 'r' });
    t.add({ kind: 'text_delta', t_s: 1.0, response_id: 'r', chars: 1, tokens: 1 });
    t.add({ kind: 'text_delta', t_s: 1.03, response_id: 'r', chars: 3, tokens: 3 });
    t.add({ kind: 'response_done', t_s: 1.1, response_id: 'r' });
    expect(t.done[0].tpot_ms).toBeCloseTo(10, 6);
    expect(t.done[0].tokens).toBe(4);
  });

  it('leaves the gaps between generation segments out of TPOT', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE, segment_gap_ms: 200 }, 0);
    t.add({ kind: 'response_created', t_s: 0, response_id: 'r' });
    t.add({ kind: 'text_delta', t_s: 1.0, response_id: 'r', chars: 1, tokens: 1 });
    t.add({ kind: 'text_delta', t_s: 1.02, response_id: 'r', chars: 1, tokens: 2 }); // 20 ms, 2 tokens
    t.add({ kind: 'text_delta', t_s: 3.0, response_id: 'r', chars: 1, tokens: 1 }); // new segment after 2 s
    t.add({ kind: 'text_delta', t_s: 3.03, response_id: 'r', chars: 1, tokens: 1 }); // 30 ms, 1 token
    t.add({ kind: 'response_done', t_s: 3.1, response_id: 'r' });
    expect(t.done[0].tpot_ms).toBeCloseTo(50 / 3, 6);
  });

  it('gives the stream window from the input stream start, across responses', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 100);
    for (const [id, at] of [['a', 100.5], ['b', 103]] as const) {
      t.add({ kind: 'response_created', t_s: at, response_id: id });
      t.add({ kind: 'text_delta', t_s: at + 0.3, response_id: id, chars: 2 });
      t.add({ kind: 'audio_delta', t_s: at + 0.2, response_id: id, bytes: BYTES_80MS * 5 });
      t.add({ kind: 'response_done', t_s: at + 0.4, response_id: id });
    }
    const m = t.metrics();
    expect(m.audio_turn_count).toBe(2);
    expect(m.stream_ttfp_ms).toBeCloseTo(700, 3);
    expect(m.stream_ttft_ms).toBeCloseTo(800, 3);
    expect(m.stream_audio_duration_ms).toBeCloseTo(800, 3);
    expect(m.stream_audio_generation_ms).toBeCloseTo(3200, 3);
    expect(m.stream_rtf).toBeCloseTo(4, 6);
    expect(m.ttfp_ms).toEqual({ count: 2, mean: 200, p50: 200, p99: 200 });
  });
});

describe('ResponseTracker audible TTFP', () => {
  it('times the first voiced audio as played: leading silence counts at its length, not at how fast it arrived', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 1, response_id: 'r' });
    expect(t.wantsVoice('r')).toBe(true);
    // Four 80 ms deltas arrive 10 ms apart: three of silence, then one whose voice starts 60 ms in.
    const voiced = [null, null, null, 60];
    voiced.forEach((v, i) => t.add({ kind: 'audio_delta', t_s: 1.2 + i * 0.01, response_id: 'r', bytes: BYTES_80MS, voiced_at_ms: v }));
    expect(t.wantsVoice('r')).toBe(false);
    t.add({ kind: 'audio_delta', t_s: 1.3, response_id: 'r', bytes: BYTES_80MS });
    t.add({ kind: 'response_done', t_s: 1.4, response_id: 'r' });
    const [r] = t.done;
    expect(r.ttfp_ms).toBeCloseTo(200, 6);
    // Played from 1.2 s: 240 ms of silence, then 60 ms more: 200 + 300.
    expect(r.audible_ttfp_ms).toBeCloseTo(500, 6);
    expect(t.metrics().audible_ttfp_ms).toMatchObject({ count: 1, p50: 500 });
  });

  it('plays a delta that comes after the audio before it ran out from its receipt, and leaves a voiceless response without a figure', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 0, response_id: 'a' });
    t.add({ kind: 'audio_delta', t_s: 0.1, response_id: 'a', bytes: BYTES_80MS, voiced_at_ms: null });
    // The silence played out at 0.18 s; the voiced delta arrives at 0.5 s and is heard 20 ms in.
    t.add({ kind: 'audio_delta', t_s: 0.5, response_id: 'a', bytes: BYTES_80MS, voiced_at_ms: 20 });
    t.add({ kind: 'response_done', t_s: 0.6, response_id: 'a' });
    t.add({ kind: 'response_created', t_s: 1, response_id: 'b' });
    t.add({ kind: 'audio_delta', t_s: 1.1, response_id: 'b', bytes: BYTES_80MS, voiced_at_ms: null });
    t.add({ kind: 'response_done', t_s: 1.2, response_id: 'b' });
    expect(t.done.map((r) => r.audible_ttfp_ms)).toEqual([expect.closeTo(520, 6), null]);
    expect(t.metrics().audible_ttfp_ms).toMatchObject({ count: 1 });
  });

  it("stops looking for a response's voice after its first 10 s of silent audio", () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 0, response_id: 'r' });
    for (let i = 0; i < 124; i++) t.add({ kind: 'audio_delta', t_s: i * 0.08, response_id: 'r', bytes: BYTES_80MS, voiced_at_ms: null });
    expect(t.wantsVoice('r')).toBe(true);
    t.add({ kind: 'audio_delta', t_s: 10, response_id: 'r', bytes: BYTES_80MS, voiced_at_ms: null });
    expect(t.wantsVoice('r')).toBe(false);
  });
});

describe('stat', () => {
  it('ignores missing values and takes nearest-rank percentiles', () => {
    expect(stat([3, null, 1, 2])).toEqual({ count: 3, mean: 2, p50: 2, p99: 3 });
    expect(stat([])).toEqual({ count: 0, mean: null, p50: null, p99: null });
  });
});

describe('ResponseTracker playback', () => {
  it('counts output gaps, drift and the underruns of a player with an 80 ms prebuffer', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE, playback_prebuffer_ms: 80 }, 0);
    t.add({ kind: 'response_created', t_s: 1, response_id: 'r' });
    // 80 ms units: on time at 1.0, 1.08, 1.16; then one 300 ms late (1.54 instead of 1.24), then on pace.
    for (const at of [1.0, 1.08, 1.16, 1.54, 1.62]) t.add({ kind: 'audio_delta', t_s: at, response_id: 'r', bytes: BYTES_80MS });
    t.add({ kind: 'response_done', t_s: 1.7, response_id: 'r' });
    const [r] = t.done;
    expect(r.max_output_gap_ms).toBeCloseTo(380, 6);
    expect(r.drift_ms).toBeCloseTo(300, 6); // 620 ms of receive span for 320 ms of audio before the last
    expect(r.playback_underruns).toBe(1); // played until 1.0 + 0.08 + 0.24 = 1.32, the next came at 1.54
    expect(t.metrics()).toMatchObject({ output_gap_max_ms: 380, drift_max_ms: 300, playback_underruns: 1 });
  });

  it('counts no underrun while audio keeps ahead of playback', () => {
    const t = new ResponseTracker({ output_sample_rate: RATE }, 0);
    t.add({ kind: 'response_created', t_s: 0, response_id: 'r' });
    for (let i = 0; i < 10; i++) t.add({ kind: 'audio_delta', t_s: 0.1 + i * 0.04, response_id: 'r', bytes: BYTES_80MS });
    t.add({ kind: 'response_done', t_s: 1, response_id: 'r' });
    expect(t.done[0].playback_underruns).toBe(0);
    expect(t.done[0].drift_ms).toBeLessThan(0);
  });
});
