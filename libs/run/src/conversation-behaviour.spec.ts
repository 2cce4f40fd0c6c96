import type { SessionSpeech, TurnRecord } from '@duplex-bench/metrics';
import { behaviourFigures } from './conversation-behaviour';
import { ConversationInput } from './conversation-input';
import { conversationDataset } from './recording/recording';

const turn = (session: string, kind: TurnRecord['kind'], outcome: TurnRecord['outcome'], latency_ms?: number): TurnRecord => ({
  session,
  pass: 0,
  step: 0,
  kind,
  outcome,
  user_start_ms: 0,
  user_end_ms: 1000,
  ...(latency_ms !== undefined ? { latency_ms } : {}),
});

describe('behaviourFigures', () => {
  it("pools every session's events into one behaviour block, turns.jsonl and speech.jsonl, in the sessions' order; a session without events adds nothing", async () => {
    const conversation = await ConversationInput.read({ conversation: 'default', packet_ms: 80, sample_rate: 16000, duration_s: 20, max_stop_s: 3, takeover_min_ms: 500 });
    const a = [turn('a', 'response', 'answered', 400), turn('a', 'stop', 'stopped', 200)];
    const b = [turn('b', 'response', 'answered', 600), turn('b', 'response', 'no_response'), turn('b', 'pause', 'took_over')];
    const speech: SessionSpeech = { session: 'b', model_speech: 'vad', steps: [], model: [[1400, 3000]], events: [] };
    const f = behaviourFigures(conversation, [{ turns: a, overlap_ms: 100 }, {}, { turns: b, overlap_ms: 300, speech }]);
    expect(f.turns_jsonl.trim().split('\n').map((l) => JSON.parse(l))).toEqual([...a, ...b]);
    expect(f.speech_jsonl).toBe(`${JSON.stringify(speech)}\n`);
    expect(f.summary.response_latency_ms).toMatchObject({ count: 2, max: expect.closeTo(600, 0) });
    expect(f.summary.stop_latency_ms.count).toBe(1);
    expect(f.summary.overlap_ms.count).toBe(2);
    expect(f.summary.pause_takeover_rate).toMatchObject({ rate: 1, count: 1 });
    expect(f.summary.outcomes).toEqual({ answered: 2, stopped: 1, no_response: 1, took_over: 1 });
    expect(f.summary.measurement_origin).toEqual(conversation.origins());
    expect(f.parts.outcomes).toEqual(f.summary.outcomes);
    expect(behaviourFigures(conversation, [{}])).toMatchObject({ turns_jsonl: '', speech_jsonl: '' });
  });
});

describe('conversationDataset', () => {
  it('names each session by its index and the script, the same every time, in file-name characters', () => {
    expect(conversationDataset('default', 2, 20).map((s) => [s.id, s.subset, s.variant, s.duration_s])).toEqual([
      ['conversation-000-default', 'conversation', 'default', 20],
      ['conversation-001-default', 'conversation', 'default', 20],
    ]);
    expect(conversationDataset('a/b c', 1, 5)[0]).toMatchObject({ id: 'conversation-000-a_b_c', variant: 'a/b c' });
  });
});
