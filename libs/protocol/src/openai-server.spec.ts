import { audioDeltaInfo, decodeFrame } from './frame';
import { gaEventName, OpenAIEvent } from './openai';
import { OpenAIServerEvents } from './openai-server';

const parse = (frame: string) => JSON.parse(frame) as Record<string, unknown> & { type: string; event_id: string };

describe('the server events of one OpenAI session', () => {
  it('numbers its events in the order they are made, under the session id, whichever builder makes them', () => {
    const s = new OpenAIServerEvents('sess7');
    const ids = [s.sessionCreated({}), s.audioDelta('r', 'i', 'AAAA'), ...s.responseStarted('r', 'i'), s.error('bad', 'no')].map((f) => parse(f).event_id);
    expect(ids).toEqual(['sess7_e0', 'sess7_e1', 'sess7_e2', 'sess7_e3', 'sess7_e4', 'sess7_e5']);
    expect(parse(new OpenAIServerEvents('other').cleared()).event_id).toBe('other_e0');
  });

  it('wraps the session it is given in session.created and session.updated', () => {
    const s = new OpenAIServerEvents('s');
    const session = { type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 24000 } } } };
    expect(parse(s.sessionCreated(session))).toEqual({ type: 'session.created', event_id: 's_e0', session });
    expect(parse(s.sessionUpdated(session))).toEqual({ type: 'session.updated', event_id: 's_e1', session });
  });

  it('answers session.close as vLLM-Omni does: session.closed with its session id and the reason', () => {
    expect(parse(new OpenAIServerEvents('s9').sessionClosed('client_close'))).toEqual({ type: 'session.closed', event_id: 's9_e0', session_id: 's9', reason: 'client_close', event: {} });
  });

  it('says what the input buffer heard: speech start and stop with their audio times, commit with the previous item, clear', () => {
    const s = new OpenAIServerEvents('s');
    expect(parse(s.speechStarted('item1', 320))).toMatchObject({ type: 'input_audio_buffer.speech_started', item_id: 'item1', audio_start_ms: 320 });
    expect(parse(s.speechStopped('item1', 2400))).toMatchObject({ type: 'input_audio_buffer.speech_stopped', item_id: 'item1', audio_end_ms: 2400 });
    expect(parse(s.committed('item1', null))).toMatchObject({ type: 'input_audio_buffer.committed', item_id: 'item1', previous_item_id: null });
    expect(parse(s.committed('item2', 'item1')).previous_item_id).toBe('item1');
    expect(Object.keys(parse(s.cleared()))).toEqual(['type', 'event_id']);
  });

  it('starts a response with the response in progress, its assistant item, and the audio part of it', () => {
    const [created, item, part] = new OpenAIServerEvents('s').responseStarted('resp1', 'item9').map(parse);
    expect(created).toMatchObject({ type: 'response.created', response: { id: 'resp1', object: 'realtime.response', status: 'in_progress', output: [] } });
    expect(created.response).not.toHaveProperty('metadata');
    expect(item).toMatchObject({ type: 'response.output_item.added', response_id: 'resp1', output_index: 0, item: { id: 'item9', role: 'assistant', status: 'in_progress', content: [] } });
    expect(part).toMatchObject({ type: 'response.content_part.added', response_id: 'resp1', item_id: 'item9', output_index: 0, content_index: 0, part: { type: 'audio', transcript: '' } });
    const [withMetadata] = new OpenAIServerEvents('s').responseStarted('resp2', 'i', { topic: 'weather' }).map(parse);
    expect(withMetadata.response).toMatchObject({ id: 'resp2', metadata: { topic: 'weather' } });
  });

  it('splices the audio payload into a delta that is valid JSON, with extra fields after it, and that the client reads without parsing', () => {
    const s = new OpenAIServerEvents('s');
    const payload = Buffer.alloc(960, 7).toString('base64');
    const plain = s.audioDelta('resp1', 'item1', payload);
    expect(parse(plain)).toEqual({ type: 'response.output_audio.delta', event_id: 's_e0', response_id: 'resp1', item_id: 'item1', output_index: 0, content_index: 0, delta: payload });
    const extra = s.audioDelta('resp1', 'item1', payload, '"sample_rate_hz":24000,"server_event_seq":4');
    expect(parse(extra)).toMatchObject({ delta: payload, sample_rate_hz: 24000, server_event_seq: 4 });
    expect(audioDeltaInfo(decodeFrame(extra))).toEqual({ response_id: 'resp1', bytes: 960, item_id: 'item1', content_index: 0, sample_rate_hz: 24000 });
  });

  it('gives a transcript delta its place and any extra fields', () => {
    expect(parse(new OpenAIServerEvents('s').transcriptDelta('r', 'i', 'hel', { server_event_seq: 2 }))).toMatchObject({
      type: 'response.output_audio_transcript.delta',
      response_id: 'r',
      item_id: 'i',
      output_index: 0,
      content_index: 0,
      delta: 'hel',
      server_event_seq: 2,
    });
  });

  it('finishes a response: each part done with the whole transcript, the item completed, response.done completed with its usage', () => {
    const events = new OpenAIServerEvents('s').responseFinished('r1', 'i1', 'hello there', { output_tokens: 17 }).map(parse);
    expect(events.map((e) => e.type)).toEqual(['response.output_audio.done', 'response.output_audio_transcript.done', 'response.content_part.done', 'response.output_item.done', 'response.done']);
    expect(events[1]).toMatchObject({ response_id: 'r1', item_id: 'i1', transcript: 'hello there' });
    expect(events[2]).toMatchObject({ part: { type: 'audio', transcript: 'hello there' } });
    const item = { id: 'i1', object: 'realtime.item', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'audio', transcript: 'hello there' }] };
    expect(events[3].item).toEqual(item);
    expect(events[4].response).toEqual({ id: 'r1', object: 'realtime.response', status: 'completed', usage: { output_tokens: 17, total_tokens: 17 }, output: [item] });
    const noUsage = parse(new OpenAIServerEvents('s').responseFinished('r1', 'i1', '').at(-1) as string);
    expect(noUsage.response).not.toHaveProperty('usage');
  });

  it('cancels a response with its item incomplete and response.done cancelled, giving the reason', () => {
    const s = new OpenAIServerEvents('s');
    for (const reason of ['turn_detected', 'client_cancelled'] as const) {
      const events = s.responseCancelled('r1', 'i1', 'hel', reason).map(parse);
      expect(events).toHaveLength(5);
      expect(events[3]).toMatchObject({ type: 'response.output_item.done', item: { status: 'incomplete' } });
      expect(events[4]).toMatchObject({ type: 'response.done', response: { id: 'r1', status: 'cancelled', status_details: { type: 'cancelled', reason }, output: [{ status: 'incomplete' }] } });
    }
  });

  it('answers a truncate with the item, content index and where its audio now ends', () => {
    expect(parse(new OpenAIServerEvents('s').itemTruncated('i3', 0, 1840))).toEqual({ type: 'conversation.item.truncated', event_id: 's_e0', item_id: 'i3', content_index: 0, audio_end_ms: 1840 });
  });

  it('reports an error as an invalid request, naming the client event it answers or null', () => {
    const s = new OpenAIServerEvents('s');
    expect(parse(s.error('invalid_value', 'rate 8000 not supported', 'c_e4')).error).toEqual({ type: 'invalid_request_error', code: 'invalid_value', message: 'rate 8000 not supported', event_id: 'c_e4' });
    expect((parse(s.error('x', 'y')).error as { event_id: unknown }).event_id).toBeNull();
  });

  it('under beta names, renames the audio and transcript output events to their beta names and keeps every other', () => {
    const ga = new OpenAIServerEvents('s');
    const beta = new OpenAIServerEvents('s', 'beta');
    const frames = (s: OpenAIServerEvents) => [...s.responseStarted('r', 'i'), s.audioDelta('r', 'i', 'AAAA'), s.transcriptDelta('r', 'i', 'w'), ...s.responseFinished('r', 'i', 'w'), s.speechStarted('i', 0)].map((f) => parse(f).type);
    const gaTypes = frames(ga);
    const betaTypes = frames(beta);
    expect(betaTypes.filter((t, k) => t !== gaTypes[k])).toEqual(['response.audio.delta', 'response.audio_transcript.delta', 'response.audio.done', 'response.audio_transcript.done']);
    // A client reads each beta name back as the GA name it stands for.
    expect(betaTypes.map(gaEventName)).toEqual(gaTypes);
    expect(gaTypes).toContain(OpenAIEvent.responseCreated);
  });
});
