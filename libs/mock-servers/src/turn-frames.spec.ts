import { ManualTimers } from '@duplex-bench/pacer/testing';
import { OpenAIServerEvents } from '@duplex-bench/protocol';
import { NativeTurnFrames, OpenAITurnFrames } from './turn-frames';

type Event = Record<string, unknown>;
const parse = (frame: string) => JSON.parse(frame) as Event;
const SILENCE = Buffer.alloc(16).toString('base64');
const VOICE = Buffer.from([1, 2, 3, 4]).toString('base64');

function native() {
  let n = 0;
  return new NativeTurnFrames(SILENCE, () => `ev_${n++}`);
}

describe('NativeTurnFrames', () => {
  it('opens a turn with response.created, giving every frame its own event id in order', () => {
    const f = native();
    const created = f.started('resp_1').map(parse);
    expect(created).toEqual([{ type: 'response.created', event_id: 'ev_0', response: { id: 'resp_1', status: 'in_progress' } }]);
    expect(parse(f.transcript('resp_1', 'hi')).event_id).toBe('ev_1');
    expect(parse(f.unitDone(0, 0, 80)).event_id).toBe('ev_2');
  });

  it("sends the frames' silence for the unit, with its sglang unit id and media time, one chunk per unit", () => {
    const f = native();
    f.started('resp_1');
    const delta = parse(f.audio('resp_1', 3, 7, 240, 80));
    expect(delta).toMatchObject({ type: 'response.output_audio.delta', response_id: 'resp_1', item_id: 'item_resp_1', delta: SILENCE, sglang: { unit_id: 'unit_3', chunk_seq: 0, media_time: { t_start_ms: 240, duration_ms: 80 } } });
  });

  it('sends a given payload instead of the silence, and the silence again after it', () => {
    const f = native();
    f.started('resp_1');
    expect(parse(f.audio('resp_1', 0, 0, 0, 80, VOICE)).delta).toBe(VOICE);
    expect(parse(f.audio('resp_1', 1, 0, 80, 80)).delta).toBe(SILENCE);
  });

  it('carries the step token count under sglang.num_tokens only when the mock reports tokens', () => {
    const f = native();
    expect(parse(f.transcript('resp_1', 'the ', 2))).toMatchObject({ type: 'response.output_audio_transcript.delta', item_id: 'item_resp_1', delta: 'the ', sglang: { num_tokens: 2 } });
    expect(parse(f.transcript('resp_1', 'the ')).sglang).toBeUndefined();
  });

  it('ends each input unit with sglang.unit.done holding the input it held', () => {
    expect(parse(native().unitDone(4, 320, 20))).toMatchObject({ type: 'sglang.unit.done', unit_id: 'unit_4', sglang: { unit_id: 'unit_4', media_time: { t_start_ms: 320, duration_ms: 20 } } });
  });

  it('finishes with audio done then response.done: completed for stop, cancelled for a client close, with num_tokens_out when counted', () => {
    const f = native();
    f.started('resp_1');
    const [audioDone, done] = f.finished('resp_1', 'ignored', 12, 'stop').map(parse);
    expect(audioDone).toMatchObject({ type: 'response.output_audio.done', response_id: 'resp_1', item_id: 'item_resp_1' });
    expect(done).toMatchObject({ type: 'response.done', response: { id: 'resp_1', status: 'completed', status_details: { reason: 'stop' }, num_tokens_out: 12 } });
    const cancelled = parse(f.finished('resp_2', '', undefined, 'client_closed')[1]);
    expect(cancelled.response).toEqual({ id: 'resp_2', status: 'cancelled', status_details: { reason: 'client_closed' } });
  });
});

function openai(server_metrics: boolean) {
  const clock = new ManualTimers();
  const frames = new OpenAITurnFrames(new OpenAIServerEvents('sess', 'ga'), SILENCE, clock, server_metrics);
  return { clock, frames };
}

const metricsOf = (e: Event) => (e.metadata as { vllm_omni?: { response_request_metrics?: Record<string, unknown> } } | undefined)?.vllm_omni?.response_request_metrics;

describe('OpenAITurnFrames', () => {
  it('opens a turn with response.created, the output item and its content part, for item_<response id>', () => {
    const { frames } = openai(false);
    const started = frames.started('resp_1').map(parse);
    expect(started.map((e) => e.type)).toEqual(['response.created', 'response.output_item.added', 'response.content_part.added']);
    expect(started[1]).toMatchObject({ item: { id: 'item_resp_1' } });
  });

  it('sends the silence payload or the one given, and has no per-unit done event', () => {
    const { frames } = openai(false);
    frames.started('resp_1');
    expect(parse(frames.audio('resp_1', 0, 0, 0, 80))).toMatchObject({ type: 'response.output_audio.delta', response_id: 'resp_1', item_id: 'item_resp_1', delta: SILENCE });
    expect(parse(frames.audio('resp_1', 1, 0, 80, 80, VOICE)).delta).toBe(VOICE);
    expect(frames.unitDone()).toBeNull();
  });

  it('without server metrics, sends plain transcript deltas', () => {
    const { frames } = openai(false);
    frames.started('resp_1');
    frames.audio('resp_1', 0, 0, 0, 80);
    const delta = parse(frames.transcript('resp_1', 'word'));
    expect(delta).toMatchObject({ type: 'response.output_audio_transcript.delta', delta: 'word' });
    expect(delta.metadata).toBeUndefined();
  });

  it("with server metrics, the first transcript delta carries TTFT and TTFP from the turn's start on the mock's clock, and only the first", () => {
    const { clock, frames } = openai(true);
    clock.now = 1000;
    frames.started('resp_1');
    clock.now = 1200.5;
    frames.audio('resp_1', 0, 0, 0, 80);
    clock.now = 1300;
    frames.audio('resp_1', 1, 0, 80, 80);
    clock.now = 1350.25;
    const first = parse(frames.transcript('resp_1', 'the'));
    expect(metricsOf(first)).toEqual({
      source: 'server_monotonic_request_start',
      measurement_origin: { ttft: 'mock turn start to first transcript delta', ttfp: 'mock turn start to first audio delta' },
      ttft_ms: 350.25,
      ttfp_ms: 200.5,
    });
    expect(metricsOf(parse(frames.transcript('resp_1', 'model')))).toBeUndefined();
  });

  it('with server metrics, leaves TTFP out when no audio went before the first transcript delta', () => {
    const { clock, frames } = openai(true);
    frames.started('resp_1');
    clock.now = 40;
    const m = metricsOf(parse(frames.transcript('resp_1', 'the')));
    expect(m?.ttft_ms).toBe(40);
    expect(m && 'ttfp_ms' in JSON.parse(JSON.stringify(m))).toBe(false);
  });

  it('measures each response from its own start, and forgets a finished one', () => {
    const { clock, frames } = openai(true);
    frames.started('resp_1');
    frames.finished('resp_1', 'the', undefined);
    clock.now = 500;
    frames.started('resp_2');
    clock.now = 520;
    frames.audio('resp_2', 0, 0, 0, 80);
    expect(metricsOf(parse(frames.transcript('resp_2', 'x')))).toMatchObject({ ttft_ms: 20, ttfp_ms: 20 });
    // resp_1 is gone: its late transcript is plain.
    expect(metricsOf(parse(frames.transcript('resp_1', 'x')))).toBeUndefined();
  });

  it('finishes with the done events and response.done completed, with usage when tokens were counted', () => {
    const { frames } = openai(false);
    frames.started('resp_1');
    const done = frames.finished('resp_1', 'the model', 9).map(parse);
    expect(done.map((e) => e.type)).toEqual(['response.output_audio.done', 'response.output_audio_transcript.done', 'response.content_part.done', 'response.output_item.done', 'response.done']);
    expect(done[1]).toMatchObject({ transcript: 'the model' });
    expect(done[4]).toMatchObject({ response: { id: 'resp_1', status: 'completed', usage: { output_tokens: 9, total_tokens: 9 } } });
    expect((parse(frames.finished('resp_2', '', undefined)[4]).response as Event).usage).toBeUndefined();
  });
});
