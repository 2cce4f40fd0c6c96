import { decodeFrame } from './frame';
import {
  gaEventName,
  isKnownOpenAIType,
  OpenAIEvent,
  openaiAppend,
  openaiCommit,
  openaiResponseCreate,
  openaiSessionRates,
  openaiSessionTurnDetection,
  openaiSessionUpdate,
} from './openai';
import { OpenAIServerEvents } from './openai-server';

describe('openai client events', () => {
  it('asks for a realtime session with PCM input at the given rate and server VAD', () => {
    const update = JSON.parse(openaiSessionUpdate('u1', { input_sample_rate: 16000, turn_detection: 'server_vad' }));
    expect(update).toEqual({
      type: 'session.update',
      event_id: 'u1',
      session: {
        type: 'realtime',
        output_modalities: ['audio'],
        audio: { input: { format: { type: 'audio/pcm', rate: 16000 }, turn_detection: { type: 'server_vad' } } },
      },
    });
  });

  it('asks for semantic VAD where the GA session puts turn detection, and reads it back', () => {
    const session = JSON.parse(openaiSessionUpdate('u', { input_sample_rate: 24000, turn_detection: 'semantic_vad' })).session;
    expect(session.audio.input).toEqual({ format: { type: 'audio/pcm', rate: 24000 }, turn_detection: { type: 'semantic_vad' } });
    expect(openaiSessionTurnDetection(session)).toBe('semantic_vad');
    expect(openaiSessionTurnDetection({ audio: { input: { turn_detection: { type: 'server_vad' } } } })).toBe('server_vad');
    expect(openaiSessionTurnDetection({ turn_detection: { type: 'semantic_vad', eagerness: 'low' } })).toBe('semantic_vad');
  });

  it('turns detection off with null and asks for an output rate only when given', () => {
    const session = JSON.parse(openaiSessionUpdate('u', { input_sample_rate: 24000, output_sample_rate: 24000, turn_detection: 'none' })).session;
    expect(session.audio.input.turn_detection).toBeNull();
    expect(session.audio.output).toEqual({ format: { type: 'audio/pcm', rate: 24000 } });
    expect(openaiSessionTurnDetection(session)).toBe('none');
    expect(openaiSessionRates(session)).toEqual({ input: 24000, output: 24000 });
  });

  it('builds append, commit and response.create as JSON with only the dialect fields', () => {
    const audio = Buffer.alloc(3840, 1).toString('base64');
    expect(JSON.parse(openaiAppend('s1_a3', Buffer.from(audio)).toString())).toEqual({ type: 'input_audio_buffer.append', event_id: 's1_a3', audio });
    expect(decodeFrame(openaiAppend('s1_a3', Buffer.from(audio)).toString()).type).toBe(OpenAIEvent.append);
    expect(JSON.parse(openaiCommit('c1'))).toEqual({ type: 'input_audio_buffer.commit', event_id: 'c1' });
    expect(JSON.parse(openaiResponseCreate('r1'))).toEqual({ type: 'response.create', event_id: 'r1' });
  });
});

describe('openai server events as received', () => {
  it('reads beta output names as their GA twins and knows both', () => {
    expect(gaEventName('response.audio.delta')).toBe(OpenAIEvent.audioDelta);
    expect(gaEventName('response.audio_transcript.delta')).toBe(OpenAIEvent.transcriptDelta);
    expect(gaEventName('response.text.delta')).toBe(OpenAIEvent.textDelta);
    expect(gaEventName('response.output_audio.delta')).toBe(OpenAIEvent.audioDelta);
    expect(isKnownOpenAIType('response.audio.delta')).toBe(true);
    expect(isKnownOpenAIType('response.output_audio.delta')).toBe(true);
    expect(isKnownOpenAIType('vendor.heartbeat')).toBe(false);
  });

  it('reads rates and turn detection from a beta session layout', () => {
    const session = { input_audio_format: 'pcm16', output_audio_format: 'pcm16', turn_detection: null };
    expect(openaiSessionRates(session)).toEqual({ input: 24000, output: 24000 });
    expect(openaiSessionTurnDetection(session)).toBe('none');
    expect(openaiSessionTurnDetection({})).toBeUndefined();
  });

  it('gives every server event its own event_id, and beta names when asked', () => {
    const ga = new OpenAIServerEvents('m0');
    const frames = [...ga.responseStarted('r0', 'i0'), ga.audioDelta('r0', 'i0', 'AAAA'), ...ga.responseFinished('r0', 'i0', 'hi')];
    const events = frames.map((f) => JSON.parse(f));
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_audio.delta',
      'response.output_audio.done',
      'response.output_audio_transcript.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.done',
    ]);
    expect(events[3]).toMatchObject({ response_id: 'r0', item_id: 'i0', output_index: 0, content_index: 0, delta: 'AAAA' });
    const beta = new OpenAIServerEvents('m1', 'beta');
    expect(JSON.parse(beta.audioDelta('r', 'i', 'AAAA', '"x":1'))).toMatchObject({ type: 'response.audio.delta', x: 1 });
    expect(JSON.parse(beta.transcriptDelta('r', 'i', 'w')).type).toBe('response.audio_transcript.delta');
  });
});
