import { decodeFrame, decodeFrameBytes } from './frame';
import { addResponseEvents, modelAudioOf, type ResponseEvent } from './response-events';

function eventsOf(event: Record<string, unknown>): ResponseEvent[] {
  const out: ResponseEvent[] = [];
  addResponseEvents(decodeFrame(JSON.stringify(event)), 5, (e) => out.push(e));
  return out;
}

describe('addResponseEvents', () => {
  it('reads GA and beta names alike', () => {
    const delta = Buffer.alloc(960).toString('base64');
    const ga = eventsOf({ type: 'response.output_audio.delta', response_id: 'r', delta });
    const beta = eventsOf({ type: 'response.audio.delta', response_id: 'r', delta });
    expect(beta).toEqual(ga);
    expect(ga).toEqual([{ kind: 'audio_delta', t_s: 5, response_id: 'r', bytes: 960 }]);
    expect(eventsOf({ type: 'response.audio_transcript.delta', response_id: 'r', delta: 'hi' })).toEqual(
      eventsOf({ type: 'response.output_audio_transcript.delta', response_id: 'r', delta: 'hi' }),
    );
  });

  it("times a delta by the rate it states, not the session's", () => {
    const [e] = eventsOf({ type: 'response.output_audio.delta', response_id: 'r', delta: Buffer.alloc(3200).toString('base64'), sample_rate_hz: 16000 });
    expect(e).toMatchObject({ kind: 'audio_delta', bytes: 3200, duration_ms: 100 });
  });

  it("reads a response's id from the top-level response_id first (vLLM-Omni), else from response.id", () => {
    expect(eventsOf({ type: 'response.created', response_id: 'top', response: { id: 'nested' } })).toEqual([{ kind: 'response_created', t_s: 5, response_id: 'top' }]);
    expect(eventsOf({ type: 'response.done', response_id: 'top', response: { status: 'completed' } })).toEqual([{ kind: 'response_done', t_s: 5, response_id: 'top', status: 'completed' }]);
    expect(eventsOf({ type: 'response.done', response: { id: 'nested', status: 'cancelled' } })).toEqual([{ kind: 'response_done', t_s: 5, response_id: 'nested', status: 'cancelled' }]);
  });

  it('adds the server metrics a frame carries after its own event', () => {
    const out = eventsOf({ type: 'response.created', response: { id: 'r', metadata: { duplex_event: { response_request_metrics: { ttft_ms: 120 } } } } });
    expect(out).toEqual([
      { kind: 'response_created', t_s: 5, response_id: 'r' },
      { kind: 'server_metrics', t_s: 5, response_id: 'r', ttft_ms: 120, ttfp_ms: undefined },
    ]);
  });
});

describe('modelAudioOf', () => {
  it("gives an audio delta's base64 in every dialect's name, from text and from bytes (a view, not a copy); other frames give null", () => {
    const b64 = Buffer.from(Int16Array.from([0, 1000, -1000, 32767]).buffer).toString('base64');
    const ga = Buffer.from(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r', delta: b64, sample_rate_hz: 24000 }));
    const beta = JSON.stringify({ type: 'response.audio.delta', response_id: 'r', delta: b64 });
    const fromBytes = modelAudioOf(decodeFrameBytes(ga));
    expect(fromBytes).toEqual({ base64: Buffer.from(b64, 'latin1'), sample_rate_hz: 24000 });
    expect(fromBytes?.base64.buffer).toBe(ga.buffer);
    expect(modelAudioOf(decodeFrame(beta))).toEqual({ base64: Buffer.from(b64, 'latin1') });
    expect(modelAudioOf(decodeFrame(JSON.stringify({ type: 'response.created', response: { id: 'r' } })))).toBeNull();
  });
});
