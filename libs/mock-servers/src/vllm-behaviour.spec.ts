import { eventsOf, fakeSocket, packets, playedSpans, scriptedInput, virtualHost, type Piece } from './behaviour.spec-helpers';
import { resolveBehaviour } from './behaviour-settings';
import type { BehaviourOptions } from './behaviour-session';
import { VllmMockSession, type VllmSlot } from './vllm-mock-session';

const IN_RATE = 16000;
const OUT_RATE = 24000;
const slot: VllmSlot = { take: () => true, limit: undefined, disconnected: () => undefined, released: () => undefined };

/** A vllm-omni mock in virtual time, fed `pieces` at 16 kHz in 80 ms appends at 0, 80 … ms; `client` events go at their times. */
async function converse(pieces: Piece[], knobs: Partial<BehaviourOptions>, o: { load?: number; client?: Array<{ at_ms: number; event: Record<string, unknown> }>; turn_detection?: Record<string, unknown> } = {}) {
  const v = virtualHost();
  const behaviour = await resolveBehaviour(knobs, OUT_RATE, () => o.load ?? 1);
  const session = new VllmMockSession(
    fakeSocket,
    v.host,
    'mock_0',
    { output_sample_rate: OUT_RATE, unit_ms: 80, ttfp_ms: 200, rtf: 0.5, silence_ms: 500, listen_every: 0, config_timeout_ms: 10_000, journal_max_bytes: 8 * 2 ** 20, behaviour },
    slot,
  );
  const send = (event: Record<string, unknown>) => session.onMessage(Buffer.from(JSON.stringify(event)), false, v.clock.now_s());
  const input = scriptedInput(pieces, IN_RATE);
  send({ type: 'session.update', session: { audio: { input: { sample_rate_hz: IN_RATE } }, ...(o.turn_detection ? { turn_detection: o.turn_detection } : {}) } });
  packets(input.pcm, IN_RATE).forEach((audio, seq) => v.scheduler.schedule(() => send({ type: 'input_audio_buffer.append', audio }), seq * 80));
  for (const c of o.client ?? []) v.scheduler.schedule(() => send(c.event), c.at_ms);
  v.scheduler.flush();
  session.onSocketClose();
  const of = (type: string) => v.frames.filter((f) => f.event.type === type);
  return { ...v, log: v.logs[0], says: input.says, spans: playedSpans(v.frames, OUT_RATE, ['response.output_audio.delta']), of };
}

const statusOf = (f: { event: Record<string, unknown> }) => (f.event.response as { status: string; status_details: { reason: string } }).status_details.reason;

describe('vllm-omni mock in behaviour mode (virtual time)', () => {
  it('answers respond-after 400 ms after the last voiced input sample: response.created, speak, deltas at the model rate, done', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 3000 }], { respond_after_ms: 400, answer_ms: 1500 });
    const q1 = c.says[0];
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 400))).toBeLessThanOrEqual(10);
    expect(eventsOf(c.log, 'answer_start')[0]).toMatchObject({ t_ms: q1.offset_ms + 400, why: 'turn_end' });
    expect(c.of('input_audio_buffer.speech_stopped')[0].event.audio_end_ms).toBe(Math.round(q1.offset_ms));
    expect(c.of('response.speak')).toHaveLength(1);
    const delta = c.of('response.output_audio.delta')[0].event;
    expect(delta).toMatchObject({ sample_rate_hz: OUT_RATE, metadata: { audio_duration_ms: 80 } });
    expect(typeof delta.server_event_seq).toBe('number');
    expect(c.of('response.done').map(statusOf)).toEqual(['stop']);
  });

  it('stops stop-after 200 ms after a barge-in onset: the terminal events of a cancelled response, cut at the playback acked, and the next answer needs no acknowledgement of it', async () => {
    const input: Piece[] = [{ say: 'q1' }, { silence_ms: 1400 }, { say: 'stop' }, { silence_ms: 3000 }];
    const barge = scriptedInput(input, IN_RATE).says[1];
    const ack_ms = Math.ceil(barge.onset_ms);
    const c = await converse(input, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, { client: [{ at_ms: ack_ms, event: { type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 640, committed_ms: 640 } }] });
    expect(Math.abs(c.spans[0].end_ms - (barge.onset_ms + 200))).toBeLessThanOrEqual(10);
    const done = c.of('response.done');
    // No server VAD asked: the overlap decision's reason, barge_in; the item cut at what the client acked as played.
    expect(done[0].event.response).toMatchObject({
      status: 'cancelled',
      status_details: { type: 'cancelled', reason: 'barge_in' },
      output: [{ id: 'item_resp_mock_0_0', status: 'cancelled', content: [{ type: 'output_audio', audio_duration_ms: 640 }] }],
      metadata: { type: 'audio.cancelled', reason: 'barge_in', committed_ms: 640, cancelled_epoch: 0, epoch: 1 },
    });
    expect(done[0].t_ms).toBeCloseTo(barge.onset_ms + 200, 6);
    const at = (f: { t_ms: number }) => f.t_ms === done[0].t_ms;
    expect(c.frames.filter(at).map((f) => f.event.type)).toEqual([
      'response.output_audio.done',
      'response.output_audio_transcript.done',
      'response.content_part.done',
      'response.output_item.done',
      'conversation.item.done',
      'response.done',
      'rate_limits.updated',
    ]);
    // A barge-in starts a new epoch: the next answer's audio carries it.
    expect((c.of('response.output_audio.delta').at(-1)?.event.metadata as { epoch: number }).epoch).toBe(1);
    expect(eventsOf(c.log, 'answer_start').map((e) => e.t_ms)).toEqual([c.says[0].offset_ms + 400, barge.offset_ms + 400]);
    // The ack is logged with what had played of the answer when it came.
    const first_ms = c.of('response.output_audio.delta')[0].t_ms;
    expect(eventsOf(c.log, 'playback_ack')).toEqual([{ kind: 'playback_ack', t_ms: ack_ms, answer: 0, played_ms: 640, heard_ms: expect.closeTo(ack_ms - first_ms, 3) }]);
  });

  it("names a barge-in turn_detected when the session asked for server VAD, as vLLM-Omni's detector reports the speech start", async () => {
    const v = await converse([{ say: 'q1' }, { silence_ms: 1400 }, { say: 'stop' }, { silence_ms: 3000 }], { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, { turn_detection: { type: 'server_vad' } });
    expect(v.of('response.done')[0].event.response).toMatchObject({ status: 'cancelled', status_details: { reason: 'turn_detected' } });
  });

  it('holds a new answer until the last one was acknowledged as played, and logs when it went', async () => {
    const input: Piece[] = [{ say: 'q1' }, { silence_ms: 2500 }, { say: 'mhm' }, { silence_ms: 3000 }];
    const { says } = scriptedInput(input, IN_RATE);
    const ack_ms = Math.ceil(says[1].offset_ms + 900);
    const c = await converse(input, { respond_after_ms: 400, answer_ms: 1000 }, { client: [{ at_ms: ack_ms, event: { type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 1000, committed_ms: 1000 } }] });
    const starts = eventsOf(c.log, 'answer_start');
    expect(starts[1].due_ms).toBe(says[1].offset_ms + 400);
    expect(starts[1].t_ms).toBeGreaterThanOrEqual(ack_ms);
    expect(starts[1].t_ms).toBeLessThan(ack_ms + 20);
  });

  it('grows respond and stop times by the capacity factor', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 1800 }, { say: 'stop' }, { silence_ms: 2000 }], { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, { load: 2 });
    const [q1, stop] = c.says;
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 800))).toBeLessThanOrEqual(10);
    expect(Math.abs(c.spans[0].end_ms - (stop.onset_ms + 400))).toBeLessThanOrEqual(10);
  });
});
