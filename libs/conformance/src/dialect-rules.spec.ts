import { checkOpenAITrace, checkVllmOmniTrace } from './dialect-rules';

const send = (event: Record<string, unknown>) => ({ direction: 'send', time_s: 0, event });
const receive = (event: Record<string, unknown>) => ({ direction: 'receive', time_s: 0, event });

/** A vllm-omni session as its client runs it: update first, every numbered event acked, close answered. */
function goodVllm() {
  return [
    send({ type: 'session.update', session: {} }),
    receive({ type: 'session.created', session: {} }),
    receive({ type: 'session.updated', session: {}, server_event_seq: 1 }),
    send({ type: 'session.event_ack', server_event_seq: 1 }),
    receive({ type: 'response.created', response: { id: 'r' }, server_event_seq: 2 }),
    send({ type: 'session.event_ack', server_event_seq: 2 }),
    send({ type: 'playback.ack', response_id: 'r', played_ms: 0 }),
    send({ type: 'session.close' }),
    receive({ type: 'session.closed', reason: 'client_close', server_event_seq: 3 }),
  ];
}

describe('checkVllmOmniTrace', () => {
  it('passes a session run as their client runs it', () => {
    expect(checkVllmOmniTrace(goodVllm())).toMatchObject({ status: 'pass', violations: [], metrics: { numbered_events: 2, event_acks: 2, playback_acks: 1, playback_ack_too_late: 0 } });
  });

  it('fails an unacknowledged event, a refused playback ack, a missing close and an event after session.closed', () => {
    const unacked = goodVllm().filter((l) => !(l.event.type === 'session.event_ack' && l.event.server_event_seq === 2));
    expect(checkVllmOmniTrace(unacked).violations).toEqual(['1 numbered server event(s) never acknowledged with session.event_ack (first: server_event_seq 2)']);
    const refused = [...goodVllm().slice(0, 7), receive({ type: 'error', error: { code: 'playback_item_mismatch' }, server_event_seq: 3 }), send({ type: 'session.event_ack', server_event_seq: 3 }), ...goodVllm().slice(7)];
    expect(checkVllmOmniTrace(refused).violations).toEqual(['the server refused what the client sent: playback_item_mismatch']);
    expect(checkVllmOmniTrace(goodVllm().slice(0, 7)).violations).toEqual(["the session never sent session.close (a plain disconnect holds the server's slot for its grace)"]);
    expect(checkVllmOmniTrace([...goodVllm(), receive({ type: 'response.done', response: { id: 'r' } })]).violations).toEqual(['receive response.done after session.closed']);
    expect(checkVllmOmniTrace(goodVllm().slice(1)).status).toBe('fail');
  });

  it('passes a first playback ack refused as playback_ack_too_late (an ack racing a later commit), and counts it', () => {
    const raced = [...goodVllm().slice(0, 7), receive({ type: 'error', error: { code: 'playback_ack_too_late' } }), ...goodVllm().slice(7)];
    expect(checkVllmOmniTrace(raced)).toMatchObject({ status: 'pass', violations: [], metrics: { playback_ack_too_late: 1 } });
  });

  it("passes a first ack refused as playback_item_not_found when it was sent before its response's end came and the response had no audio; fails one sent after the end, or of a response with audio", () => {
    const notFound = receive({ type: 'error', error: { code: 'playback_item_not_found', message: 'No assistant response item is registered for r.' }, server_event_seq: 4 });
    const end = [receive({ type: 'response.listen', response_id: 'r', server_event_seq: 3 }), send({ type: 'session.event_ack', server_event_seq: 3 })];
    const acked = send({ type: 'session.event_ack', server_event_seq: 4 });
    const close = goodVllm().slice(7);
    const overtaken = [...goodVllm().slice(0, 7), ...end, notFound, acked, ...close];
    expect(checkVllmOmniTrace(overtaken)).toMatchObject({ status: 'pass', violations: [], metrics: { playback_ack_after_end: 1 } });
    // The ack went after the client had read the end: its fault.
    const late = [...goodVllm().slice(0, 6), ...end, ...goodVllm().slice(6, 7), notFound, acked, ...close];
    expect(checkVllmOmniTrace(late).violations).toEqual(['the server refused what the client sent: playback_item_not_found']);
    // The response had audio: it had something to play, and an item.
    const audio = receive({ type: 'response.output_audio.delta', response_id: 'r', delta: 'AAAA' });
    expect(checkVllmOmniTrace([...goodVllm().slice(0, 7), audio, ...end, notFound, acked, ...close]).violations).toEqual(['the server refused what the client sent: playback_item_not_found']);
  });
});

describe('checkOpenAITrace', () => {
  const created = receive({ type: 'session.created', session: {} });
  it('passes a response.create sent once the active response is done, and fails one sent while it is active', () => {
    const queued = [created, send({ type: 'response.create' }), receive({ type: 'response.created', response: { id: 'a' } }), receive({ type: 'response.done', response: { id: 'a' } }), send({ type: 'response.create' })];
    expect(checkOpenAITrace(queued)).toMatchObject({ status: 'pass', metrics: { response_creates: 2 } });
    const early = [created, send({ type: 'response.create' }), receive({ type: 'response.created', response: { id: 'a' } }), send({ type: 'response.create' })];
    expect(checkOpenAITrace(early).violations).toEqual(['response.create sent while response a was active']);
    expect(checkOpenAITrace([send({ type: 'session.update' }), created]).status).toBe('fail');
  });
});
