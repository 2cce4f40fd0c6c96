import type { ConversationScript, ConversationStep } from '@duplex-bench/audio';
import { eventsOf, fakeSocket, packets, playedSpans, scriptedInput, virtualHost, type Piece } from './behaviour.spec-helpers';
import { resolveBehaviour } from './behaviour-settings';
import type { BehaviourOptions } from './behaviour-session';
import { OpenAIMockSession } from './openai-mock-session';

const RATE = 24000;
const script = (steps: ConversationStep[]): ConversationScript => ({ name: 'test', file: '/test.yaml', steps });

/**
 * An openai model mock in virtual time, fed `pieces` at 24 kHz in 80 ms appends at 0, 80, 160 … ms
 * (input position and clock agree); `client` events go at their times.
 */
async function converse(pieces: Piece[], knobs: Partial<BehaviourOptions> & { conversation?: ConversationScript }, o: { load?: number; client?: Array<{ at_ms: number; event: Record<string, unknown> }> } = {}) {
  const v = virtualHost();
  const behaviour = await resolveBehaviour(knobs, RATE, () => o.load ?? 1);
  const session = new OpenAIMockSession(
    fakeSocket,
    v.host,
    'mock_0',
    { names: 'ga', vllm: false, input_sample_rate: RATE, output_sample_rate: RATE, unit_ms: 80, model: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: 5 }, silence_ms: 500, behaviour },
    Buffer.alloc(3840).toString('base64'),
    null,
  );
  const send = (event: Record<string, unknown>) => session.onMessage(Buffer.from(JSON.stringify(event)), false, v.clock.now_s());
  const input = scriptedInput(pieces, RATE);
  session.start();
  packets(input.pcm, RATE).forEach((audio, seq) => v.scheduler.schedule(() => send({ type: 'input_audio_buffer.append', audio }), seq * 80));
  for (const c of o.client ?? []) v.scheduler.schedule(() => send(c.event), c.at_ms);
  v.scheduler.flush();
  session.dispose();
  const spans = playedSpans(v.frames, RATE, ['response.output_audio.delta']);
  const of = (type: string) => v.frames.filter((f) => f.event.type === type);
  return { ...v, log: v.logs[0], says: input.says, spans, of };
}

describe('openai model mock in behaviour mode (virtual time)', () => {
  it('answers respond-after 400 ms after the last voiced input sample, as one response paced in real time', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 4000 }], { respond_after_ms: 400, answer_ms: 1500 });
    const q1 = c.says[0];
    expect(c.spans).toHaveLength(1);
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 400))).toBeLessThanOrEqual(10);
    const [start] = eventsOf(c.log, 'answer_start');
    expect(start).toMatchObject({ t_ms: q1.offset_ms + 400, due_ms: q1.offset_ms + 400, why: 'turn_end' });
    expect(Math.abs(eventsOf(c.log, 'answer_end')[0].t_ms - c.spans[0].end_ms)).toBeLessThanOrEqual(10);
    // Server VAD events where the mock heard the user; the response opens with its audio and completes.
    expect(c.of('input_audio_buffer.speech_started')[0].event.audio_start_ms).toBe(Math.round(q1.onset_ms));
    expect(c.of('input_audio_buffer.speech_stopped')[0].event.audio_end_ms).toBe(Math.round(q1.offset_ms));
    expect(c.of('input_audio_buffer.committed')).toHaveLength(1);
    expect(c.of('response.created').map((f) => f.t_ms)).toEqual([c.of('response.output_audio.delta')[0].t_ms]);
    const deltas = c.of('response.output_audio.delta').map((f) => f.t_ms);
    expect(deltas.slice(1).map((t, i) => Math.round((t - deltas[i]) * 1e6) / 1e6)).toEqual(Array(deltas.length - 1).fill(80));
    expect(c.of('response.done').map((f) => (f.event.response as { status: string }).status)).toEqual(['completed']);
  });

  it('stops stop-after 200 ms after a barge-in onset: audio ends there and the response ends cancelled (turn_detected) then', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 1400 }, { say: 'stop' }, { silence_ms: 3000 }], { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 });
    const barge = c.says[1];
    expect(eventsOf(c.log, 'barge_in')[0]).toMatchObject({ t_ms: barge.onset_ms, stop_at_ms: barge.onset_ms + 200 });
    expect(Math.abs(c.spans[0].end_ms - (barge.onset_ms + 200))).toBeLessThanOrEqual(10);
    const done = c.of('response.done');
    expect(done[0].event.response).toMatchObject({ status: 'cancelled', status_details: { type: 'cancelled', reason: 'turn_detected' } });
    expect(done[0].t_ms).toBeCloseTo(barge.onset_ms + 200, 6);
    // The barge-in's end is the end of a turn: a second response, completed.
    expect(done.map((f) => (f.event.response as { status: string }).status)).toEqual(['cancelled', 'completed']);
    expect(eventsOf(c.log, 'answer_end').map((e) => e.why)).toEqual(['barge_in', 'done']);
  });

  it('takeover-after 800: holds through a 400 ms pause, and takes a 1,200 ms pause 800 ms in', async () => {
    const pause = (ms: number) => script([{ kind: 'say', file: 'q3a.wav' }, { kind: 'silence', ms, expect: 'hold' }, { kind: 'say', file: 'q3b.wav' }, { kind: 'listen', until: 'model_done', max_s: 15 }]);
    const short = await converse([{ say: 'q3a' }, { gap_ms: 400 }, { say: 'q3b' }, { silence_ms: 3000 }], { takeover_after_ms: 800, respond_after_ms: 400, conversation: pause(400) });
    expect(short.spans.filter((s) => s.start_ms < short.says[1].onset_ms)).toEqual([]);
    expect(eventsOf(short.log, 'answer_start').map((e) => e.why)).toEqual(['turn_end']);
    const long = await converse([{ say: 'q3a' }, { gap_ms: 1200 }, { say: 'q3b' }, { silence_ms: 3000 }], { takeover_after_ms: 800, respond_after_ms: 400, conversation: pause(1200) });
    expect(Math.abs(long.spans[0].start_ms - (long.says[0].offset_ms + 800))).toBeLessThanOrEqual(10);
    expect(eventsOf(long.log, 'answer_start')[0]).toMatchObject({ why: 'takeover', t_ms: long.says[0].offset_ms + 800, step: 1 });
  });

  it('talks over a backchannel, and yields to one with yield_on_backchannel', async () => {
    const s = script([{ kind: 'say', file: 'q2.wav' }, { kind: 'listen', until: 'model_speech', ms: 600, max_s: 15 }, { kind: 'say', file: 'mhm.wav', expect: 'continue' }, { kind: 'listen', until: 'model_done', max_s: 15 }]);
    const input: Piece[] = [{ say: 'q2' }, { silence_ms: 1000 }, { say: 'mhm' }, { silence_ms: 4000 }];
    const kept = await converse(input, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 3000, conversation: s });
    const mhm = kept.says[1];
    expect(eventsOf(kept.log, 'backchannel')[0]).toMatchObject({ t_ms: mhm.onset_ms, yields: false, step: 2 });
    expect(kept.of('response.done').map((f) => (f.event.response as { status: string }).status)).toEqual(['completed']);
    const yielded = await converse(input, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 3000, yield_on_backchannel: true, conversation: s });
    expect(Math.abs(yielded.spans[0].end_ms - (mhm.onset_ms + 200))).toBeLessThanOrEqual(10);
    expect(yielded.of('response.done').map((f) => (f.event.response as { status: string }).status)).toEqual(['cancelled']);
    expect(eventsOf(yielded.log, 'answer_end').map((e) => e.why)).toEqual(['backchannel_yield']);
  });

  it('grows respond and stop times by the capacity factor', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 1800 }, { say: 'stop' }, { silence_ms: 2000 }], { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, { load: 2 });
    const [q1, stop] = c.says;
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 800))).toBeLessThanOrEqual(10);
    expect(Math.abs(c.spans[0].end_ms - (stop.onset_ms + 400))).toBeLessThanOrEqual(10);
  });

  it("stops at once on the client's response.cancel and answers conversation.item.truncate", async () => {
    const q1 = scriptedInput([{ say: 'q1' }], RATE).says[0];
    const cancel_ms = Math.ceil(q1.offset_ms + 400 + 700);
    const c = await converse([{ say: 'q1' }, { silence_ms: 4000 }], { respond_after_ms: 400, stop_after_ms: 1000, answer_ms: 3000 }, {
      client: [
        { at_ms: cancel_ms, event: { type: 'response.cancel' } },
        { at_ms: cancel_ms, event: { type: 'conversation.item.truncate', item_id: 'item_resp_0', content_index: 0, audio_end_ms: 700 } },
        { at_ms: cancel_ms + 10, event: { type: 'response.cancel', event_id: 'again' } },
      ],
    });
    const done = c.of('response.done');
    expect(done.map((f) => f.t_ms)).toEqual([cancel_ms]);
    expect(done[0].event.response).toMatchObject({ status: 'cancelled', status_details: { reason: 'client_cancelled' } });
    expect(c.of('conversation.item.truncated')[0].event).toMatchObject({ item_id: 'item_resp_0', content_index: 0, audio_end_ms: 700 });
    expect(c.of('error')[0].event.error).toMatchObject({ code: 'response_cancel_not_active', event_id: 'again' });
    expect(eventsOf(c.log, 'answer_end')[0].why).toBe('client_cancel');
    // The truncate is logged with what had played of the answer by then: its audio since the first delta, paced in real time.
    const first_ms = c.of('response.output_audio.delta')[0].t_ms;
    expect(eventsOf(c.log, 'truncate')).toEqual([{ kind: 'truncate', t_ms: cancel_ms, answer: 0, audio_end_ms: 700, heard_ms: expect.closeTo(cancel_ms - first_ms, 3) }]);
    // What went out before the cancel plays to its end: at most one unit past it.
    expect(c.spans[0].end_ms).toBeLessThanOrEqual(cancel_ms + 80);
  });

  it('honours interrupt_response: false from the client: the answer spoken over goes on until the response.cancel, which stops it at once', async () => {
    const input: Piece[] = [{ say: 'q1' }, { silence_ms: 1400 }, { say: 'stop' }, { silence_ms: 3000 }];
    const { says } = scriptedInput(input, RATE);
    const barge = says[1];
    const cancel_ms = Math.ceil(barge.onset_ms + 120);
    const c = await converse(input, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, {
      client: [
        { at_ms: 0, event: { type: 'session.update', session: { type: 'realtime', audio: { input: { turn_detection: { type: 'server_vad', interrupt_response: false } } } } } },
        { at_ms: cancel_ms, event: { type: 'response.cancel' } },
      ],
    });
    const updated = c.of('session.updated')[0].event.session as { audio: { input: { turn_detection: { interrupt_response: boolean } } } };
    expect(updated.audio.input.turn_detection.interrupt_response).toBe(false);
    // The barge-in is heard and logged, with no stop of the server's own: the client's cancel ends the answer.
    expect(eventsOf(c.log, 'barge_in')[0]).toEqual({ kind: 'barge_in', t_ms: barge.onset_ms, answer: 0, step: undefined });
    const done = c.of('response.done');
    expect(done[0].t_ms).toBe(cancel_ms);
    expect(done[0].event.response).toMatchObject({ status: 'cancelled', status_details: { reason: 'client_cancelled' } });
    expect(eventsOf(c.log, 'answer_end')[0].why).toBe('client_cancel');
    // Without the cancel the answer talks over the user to its end.
    const kept = await converse(input, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, {
      client: [{ at_ms: 0, event: { type: 'session.update', session: { type: 'realtime', audio: { input: { turn_detection: { type: 'server_vad', interrupt_response: false } } } } } }],
    });
    expect(eventsOf(kept.log, 'answer_end').map((e) => e.why)).toEqual(['done']);
    expect(kept.spans[0].end_ms).toBeGreaterThan(barge.offset_ms);
  });
});
