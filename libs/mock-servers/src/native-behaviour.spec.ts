import type { ConversationScript, ConversationStep } from '@duplex-bench/audio';
import { nativeGrant, NATIVE_PROFILES, type NativeLimits } from '@duplex-bench/protocol';
import { eventsOf, fakeSocket, packets, playedSpans, scriptedInput, virtualHost, type Piece } from './behaviour.spec-helpers';
import { resolveBehaviour } from './behaviour-settings';
import type { BehaviourOptions } from './behaviour-session';
import { NativeMockSession } from './native-mock-session';

const LIMITS: NativeLimits = { max_input_bytes: 1e9, max_output_bytes: 1e9, max_output_events: 1e6, max_history_chars: 65536, cleanup_timeout_s: 30 };
const IN_RATE = 16000;

function script(steps: ConversationStep[]): ConversationScript {
  return { name: 'test', file: '/test.yaml', steps };
}

/**
 * A native model mock (nemotron by default) in virtual time, fed `pieces` as the probe streams
 * them: 80 ms appends at 0, 80, 160 … ms, each arriving at its own start, so input position and
 * clock agree (ms).
 */
async function converse(pieces: Piece[], knobs: Partial<BehaviourOptions> & { conversation?: ConversationScript | string }, profile: 'nemotron' | 'minicpmo' = 'nemotron', load = 1) {
  const p = NATIVE_PROFILES[profile];
  const v = virtualHost();
  const behaviour = await resolveBehaviour(knobs, p.output_sample_rate, () => load);
  const model = profile === 'nemotron' ? { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity } : { ttfp_ms: 300, rtf: 0.5, burst_units: 1, turn_every_s: 5 };
  const silence = Buffer.alloc(Math.floor((p.output_sample_rate * p.native_unit_ms) / 1000) * 2).toString('base64');
  const session = new NativeMockSession(fakeSocket, v.host, 'mock_0', { grant: nativeGrant(p.output_sample_rate, p.native_unit_ms, LIMITS), replies_per_unit: 3, model, behaviour }, silence, null);
  const send = (event: Record<string, unknown>) => session.onMessage(Buffer.from(JSON.stringify(event)), false, v.clock.now_s());
  const input = scriptedInput(pieces, IN_RATE);
  const appends = packets(input.pcm, IN_RATE);
  session.start();
  send({ type: 'session.update', event_id: 'u', session: { output_modalities: ['audio'] } });
  appends.forEach((audio, seq) => v.scheduler.schedule(() => send({ type: 'input_audio_buffer.append', event_id: `a${seq}`, audio, sglang: { seq, t_start_ms: seq * 80 } }), seq * 80));
  v.scheduler.schedule(() => send({ type: 'sglang.input_audio.end', event_id: 'end' }), appends.length * 80);
  v.scheduler.flush();
  send({ type: 'session.close', event_id: 'close' });
  session.dispose();
  const spans = playedSpans(v.frames, p.output_sample_rate, ['response.output_audio.delta']);
  return { ...v, log: v.logs[0], says: input.says, spans, unit_ms: p.native_unit_ms };
}

describe('native model mock in behaviour mode (virtual time)', () => {
  it('answers respond-after 400 ms after the last voiced input sample: the first voiced output sample within one unit, the log exact', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 4000 }], { respond_after_ms: 400, answer_ms: 1500 });
    const q1 = c.says[0];
    expect(c.spans).toHaveLength(1);
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 400))).toBeLessThanOrEqual(c.unit_ms);
    const [heard] = eventsOf(c.log, 'speech_end');
    expect(heard).toMatchObject({ t_ms: q1.offset_ms, input_ms: q1.offset_ms, means: 'turn_end' });
    expect(eventsOf(c.log, 'speech_start')[0]).toMatchObject({ t_ms: q1.onset_ms, input_ms: q1.onset_ms });
    const [start] = eventsOf(c.log, 'answer_start');
    expect(start).toMatchObject({ why: 'turn_end', due_ms: q1.offset_ms + 400 });
    // The log says when the voiced output went, to a VAD frame of the frames sent.
    expect(Math.abs(start.t_ms - c.spans[0].start_ms)).toBeLessThanOrEqual(10);
    const [end] = eventsOf(c.log, 'answer_end');
    expect(end.why).toBe('done');
    expect(Math.abs(end.t_ms - c.spans[0].end_ms)).toBeLessThanOrEqual(10);
    // Silence while it listens: every unit carries audio, only the answer is voiced.
    expect(c.frames.filter((f) => f.event.type === 'response.output_audio.delta').length).toBeGreaterThan(60);
  });

  it('stops stop-after 200 ms after a barge-in onset: the output goes silent within one unit', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 1400 }, { say: 'stop' }, { silence_ms: 3000 }], { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 });
    const barge = c.says[1];
    const [b] = eventsOf(c.log, 'barge_in');
    expect(b).toMatchObject({ t_ms: barge.onset_ms, answer: 0, stop_at_ms: barge.onset_ms + 200 });
    const playing = c.spans.find((s) => s.start_ms < barge.onset_ms && s.end_ms > barge.onset_ms);
    expect(playing).toBeDefined();
    expect(Math.abs((playing?.end_ms ?? 0) - (barge.onset_ms + 200))).toBeLessThanOrEqual(c.unit_ms);
    const [end] = eventsOf(c.log, 'answer_end');
    expect(end.why).toBe('barge_in');
    expect(Math.abs(end.t_ms - (playing?.end_ms ?? 0))).toBeLessThanOrEqual(10);
    // Without a script the barge-in's end is the end of a turn: a second answer follows.
    expect(eventsOf(c.log, 'answer_start')).toHaveLength(2);
  });

  const pause = (ms: number) =>
    script([{ kind: 'say', file: 'q3a.wav' }, { kind: 'silence', ms, expect: 'hold' }, { kind: 'say', file: 'q3b.wav' }, { kind: 'listen', until: 'model_done', max_s: 15 }]);

  it('takeover-after 800: holds through a 400 ms pause, and takes a 1,200 ms pause 800 ms in', async () => {
    const short = await converse([{ say: 'q3a' }, { gap_ms: 400 }, { say: 'q3b' }, { silence_ms: 3000 }], { takeover_after_ms: 800, respond_after_ms: 400, conversation: pause(400) });
    const [a, b] = short.says;
    expect(short.spans.filter((s) => s.start_ms < b.onset_ms)).toEqual([]);
    expect(eventsOf(short.log, 'speech_end').map((e) => [e.step, e.means])).toEqual([
      [0, 'pause'],
      [2, 'turn_end'],
    ]);
    expect(eventsOf(short.log, 'answer_start').map((e) => e.why)).toEqual(['turn_end']);

    const long = await converse([{ say: 'q3a' }, { gap_ms: 1200 }, { say: 'q3b' }, { silence_ms: 3000 }], { takeover_after_ms: 800, respond_after_ms: 400, conversation: pause(1200) });
    const [a2] = long.says;
    expect(Math.abs(long.spans[0].start_ms - (a2.offset_ms + 800))).toBeLessThanOrEqual(long.unit_ms);
    const [takeover] = eventsOf(long.log, 'answer_start');
    expect(takeover).toMatchObject({ why: 'takeover', due_ms: a2.offset_ms + 800, step: 1 });
    // The user resumes over the takeover: that is a barge-in too.
    expect(eventsOf(long.log, 'barge_in')).toHaveLength(1);
    expect(a.name).toBe('q3a');
  });

  const backchannel = script([
    { kind: 'say', file: 'q2.wav' },
    { kind: 'listen', until: 'model_speech', ms: 600, max_s: 15 },
    { kind: 'say', file: 'mhm.wav', expect: 'continue' },
    { kind: 'listen', until: 'model_done', max_s: 15 },
  ]);
  const backchannelInput: Piece[] = [{ say: 'q2' }, { silence_ms: 1000 }, { say: 'mhm' }, { silence_ms: 4000 }];

  it('talks over a backchannel, and yields to one with yield_on_backchannel', async () => {
    const kept = await converse(backchannelInput, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 3000, conversation: backchannel });
    const mhm = kept.says[1];
    expect(eventsOf(kept.log, 'backchannel')).toEqual([{ kind: 'backchannel', t_ms: mhm.onset_ms, answer: 0, yields: false, step: 2 }]);
    expect(eventsOf(kept.log, 'answer_end').map((e) => e.why)).toEqual(['done']);
    expect(kept.spans).toHaveLength(1);
    expect(kept.spans[0].end_ms).toBeGreaterThan(mhm.offset_ms + 1000);
    // A backchannel hands no turn over: no second answer.
    expect(eventsOf(kept.log, 'speech_end')[1].means).toBe('backchannel');
    expect(eventsOf(kept.log, 'answer_start')).toHaveLength(1);

    const yielded = await converse(backchannelInput, { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 3000, yield_on_backchannel: true, conversation: backchannel });
    expect(eventsOf(yielded.log, 'backchannel')[0]).toMatchObject({ yields: true, stop_at_ms: mhm.onset_ms + 200 });
    expect(eventsOf(yielded.log, 'answer_end').map((e) => e.why)).toEqual(['backchannel_yield']);
    expect(Math.abs(yielded.spans[0].end_ms - (mhm.onset_ms + 200))).toBeLessThanOrEqual(yielded.unit_ms);
    expect(yielded.spans).toHaveLength(1);
  });

  it('grows respond and stop times by the capacity factor', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 1800 }, { say: 'stop' }, { silence_ms: 2000 }], { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, 'nemotron', 2);
    const [q1, stop] = c.says;
    expect(eventsOf(c.log, 'answer_start')[0].due_ms).toBe(q1.offset_ms + 800);
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 800))).toBeLessThanOrEqual(c.unit_ms);
    expect(eventsOf(c.log, 'barge_in')[0].stop_at_ms).toBe(stop.onset_ms + 400);
    expect(Math.abs(c.spans[0].end_ms - (stop.onset_ms + 400))).toBeLessThanOrEqual(c.unit_ms);
  });

  it('plays the other side of the built-in default script: turns, a barge-in, a pause held, a backchannel talked over', async () => {
    const c = await converse(
      [{ say: 'q1' }, { silence_ms: 4000 }, { say: 'q2' }, { silence_ms: 1200 }, { say: 'stop' }, { say: 'q3a' }, { silence_ms: 1500 }, { say: 'q3b' }, { silence_ms: 1000 }, { say: 'mhm' }, { silence_ms: 4000 }],
      { respond_after_ms: 400, conversation: 'default' },
    );
    expect(eventsOf(c.log, 'speech_end').map((e) => [e.step, e.means])).toEqual([
      [0, 'turn_end'],
      [2, 'turn_end'],
      [4, 'pause'],
      [5, 'pause'],
      [7, 'turn_end'],
      [9, 'backchannel'],
    ]);
    expect(eventsOf(c.log, 'answer_start').map((e) => [e.why, e.step])).toEqual([
      ['turn_end', 1],
      ['turn_end', 3],
      ['turn_end', 8],
    ]);
    expect(eventsOf(c.log, 'barge_in').map((e) => e.step)).toEqual([4]);
    expect(eventsOf(c.log, 'backchannel').map((e) => [e.step, e.yields])).toEqual([[9, false]]);
    expect(eventsOf(c.log, 'answer_end').map((e) => e.why)).toEqual(['done', 'barge_in', 'done']);
  });

  it('minicpmo: 1 s units at 24 kHz, the same figures within one unit', async () => {
    const c = await converse([{ say: 'q1' }, { silence_ms: 4000 }], { respond_after_ms: 400, answer_ms: 1500 }, 'minicpmo');
    const q1 = c.says[0];
    expect(c.spans).toHaveLength(1);
    expect(Math.abs(c.spans[0].start_ms - (q1.offset_ms + 400))).toBeLessThanOrEqual(1000);
    expect(Math.abs(eventsOf(c.log, 'answer_start')[0].t_ms - c.spans[0].start_ms)).toBeLessThanOrEqual(10);
  });
});
