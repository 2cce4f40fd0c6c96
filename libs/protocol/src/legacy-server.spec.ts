import { LegacyServerEvents } from './legacy-server';
import { legacyResponseId, legacyTerminal } from './legacy';

describe('LegacyServerEvents', () => {
  it('numbers every event of a session with its own evt_ prefix', () => {
    const events = new LegacyServerEvents('s0');
    const ids = [events.sessionCreated({}), events.speechStarted('i0', 0), events.committed('i0')].map((e) => JSON.parse(e).event_id);
    expect(ids).toEqual(['evt_s0_0', 'evt_s0_1', 'evt_s0_2']);
  });

  it('splices an audio delta that parses as the session sends it: content_index 1 of output 0', () => {
    const events = new LegacyServerEvents('s1');
    events.responseCreated('r0');
    expect(JSON.parse(events.audioDelta('r0', 'it0', 'AAAA'))).toEqual({
      type: 'response.audio.delta',
      event_id: 'evt_s1_1',
      response_id: 'r0',
      item_id: 'it0',
      output_index: 0,
      content_index: 1,
      delta: 'AAAA',
    });
    expect(JSON.parse(events.textDelta('r0', 'it0', 'hi'))).toMatchObject({ content_index: 0, output_index: 0 });
  });

  it('ends a response with its item, its status and reason, and the transcript only when audio went out', () => {
    const events = new LegacyServerEvents('s2');
    const done = JSON.parse(events.responseDone('r0', 'it0', { status: 'cancelled', reason: 'turn_detected' }, 'hi', false));
    expect(legacyResponseId(done)).toBe('r0');
    expect(legacyTerminal(done)).toEqual({ status: 'cancelled', reason: 'turn_detected' });
    expect(done.response.output[0].content).toEqual([{ type: 'text', text: 'hi' }]);
    const spoken = JSON.parse(events.responseDone('r1', 'it1', { status: 'completed', reason: 'stop' }, 'yes', true));
    expect(spoken.response.output[0].content).toEqual([
      { type: 'text', text: 'yes' },
      { type: 'audio', transcript: 'yes' },
    ]);
  });

  it('sends errors as non-fatal, naming the client event when there is one', () => {
    const events = new LegacyServerEvents('s3');
    expect(JSON.parse(events.error('invalid_request_error', 'bad', 'no', 'c1'))).toMatchObject({ sglang: { fatal: false }, error: { code: 'bad', event_id: 'c1' } });
    expect(JSON.parse(events.error('invalid_request_error', 'bad', 'no')).error.event_id).toBeNull();
  });
});
