import { VirtualTimeScheduler } from 'rxjs';
import type { ConversationScript } from '@duplex-bench/audio';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { eventsOf, packets, scriptedInput, type Piece } from './behaviour.spec-helpers';
import { BehaviourLog } from './behaviour-log';
import { BehaviourSession, type AnswerSink, type BehaviourOptions } from './behaviour-session';
import { resolveBehaviour } from './behaviour-settings';

const RATE = 24000;
const CAPACITY = 4;

/**
 * One turn-based session (80 ms answer units) in virtual time on a mock with `capacity_sessions: 4`,
 * whose load is what the server gives it: active sessions over the capacity. It hears `pieces` in
 * 80 ms appends, each arriving at its own start (input position and clock agree, ms); `active`
 * takes each value of `changes` at its time.
 */
async function hear(pieces: Piece[], knobs: Partial<BehaviourOptions> & { conversation?: ConversationScript }, active: number, changes: Array<{ at_ms: number; active: number }> = []) {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  let now_active = active;
  const settings = await resolveBehaviour(knobs, RATE, () => now_active / CAPACITY);
  const log = new BehaviourLog('mock_0');
  const sink: AnswerSink = { start: () => undefined, audio: () => undefined, end: () => undefined };
  const session = new BehaviourSession(settings, RATE, clock, log, { sink, unit_ms: 80 });
  const input = scriptedInput(pieces, RATE);
  packets(input.pcm, RATE).forEach((audio, seq) => scheduler.schedule(() => session.onInput(Buffer.from(audio, 'base64'), clock.now_s()), seq * 80));
  for (const c of changes) scheduler.schedule(() => (now_active = c.active), c.at_ms);
  scheduler.flush();
  session.close();
  return { log, says: input.says };
}

/** A question, an answer, and `stop` said over it 1.8 s after the question ends (past a doubled respond-after, inside a 5 s answer). */
const BARGE_IN: Piece[] = [{ say: 'q1' }, { silence_ms: 1800 }, { say: 'stop' }, { silence_ms: 2000 }];
const KNOBS = { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 };

describe('BehaviourSession under capacity_sessions: respond and stop times × max(1, active/capacity)', () => {
  it.each([
    { active: 1, respond_ms: 400, stop_ms: 200 },
    { active: 4, respond_ms: 400, stop_ms: 200 },
    { active: 6, respond_ms: 600, stop_ms: 300 },
    { active: 8, respond_ms: 800, stop_ms: 400 },
  ])('with $active of 4 sessions active: answers $respond_ms ms after the turn ends, goes silent $stop_ms ms after a barge-in', async ({ active, respond_ms, stop_ms }) => {
    const { log, says } = await hear(BARGE_IN, KNOBS, active);
    const [q1, stop] = says;
    const [end] = eventsOf(log, 'speech_end');
    expect(end).toMatchObject({ t_ms: q1.offset_ms, means: 'turn_end' });
    const [answer] = eventsOf(log, 'answer_start');
    expect(answer).toMatchObject({ why: 'turn_end', due_ms: expect.closeTo(q1.offset_ms + respond_ms, 6) });
    // The answer's first voiced sample plays when it was due (its onset lies that far into the answer audio).
    expect(answer.t_ms).toBeCloseTo(answer.due_ms, 3);
    const [barge] = eventsOf(log, 'barge_in');
    expect(barge).toMatchObject({ t_ms: stop.onset_ms, answer: 0, stop_at_ms: expect.closeTo(stop.onset_ms + stop_ms, 6) });
    // The answer's audio ends at the stop, to a sample.
    const [silent] = eventsOf(log, 'answer_end');
    expect(silent).toMatchObject({ answer: 0, why: 'barge_in', silent_ms: expect.closeTo(stop.onset_ms + stop_ms, 1) });
  });

  it('reads the load when it decides: a turn end below capacity answers at the base time, a barge-in after the load doubled stops at twice its own', async () => {
    const q1 = scriptedInput(BARGE_IN, RATE).says[0];
    // 2 of 4 active until the answer is out, then 8.
    const { log, says } = await hear(BARGE_IN, KNOBS, 2, [{ at_ms: Math.ceil(q1.offset_ms + 1000), active: 8 }]);
    const stop = says[1];
    expect(eventsOf(log, 'answer_start')[0].due_ms).toBeCloseTo(q1.offset_ms + 400, 6);
    expect(eventsOf(log, 'barge_in')[0].stop_at_ms).toBeCloseTo(stop.onset_ms + 400, 6);
  });

  it('leaves takeover times as they are: a pause is taken takeover-after in, however loaded', async () => {
    const pause: ConversationScript = {
      name: 'test',
      file: '/test.yaml',
      steps: [{ kind: 'say', file: 'q3a.wav' }, { kind: 'silence', ms: 1200, expect: 'hold' }, { kind: 'say', file: 'q3b.wav' }, { kind: 'listen', until: 'model_done', max_s: 15 }],
    };
    const { log, says } = await hear([{ say: 'q3a' }, { gap_ms: 1200 }, { say: 'q3b' }, { silence_ms: 3000 }], { takeover_after_ms: 800, respond_after_ms: 400, conversation: pause }, 8);
    expect(eventsOf(log, 'speech_end')[0]).toMatchObject({ means: 'pause', step: 0 });
    expect(eventsOf(log, 'answer_start')[0]).toMatchObject({ why: 'takeover', due_ms: expect.closeTo(says[0].offset_ms + 800, 6) });
  });
});
