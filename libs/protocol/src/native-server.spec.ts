import { decodeFrame } from './frame';
import { NativeEvent, serverError } from './native';
import {
  nativeGrant,
  NativeAudioDeltaTemplate,
  nativeAccepted,
  nativeAudioDone,
  nativeDrained,
  nativeError,
  nativeInputEnded,
  nativeResponseCreated,
  nativeResponseDone,
  nativeSessionClosed,
  nativeSessionCreated,
  nativeSessionUpdated,
  nativeTranscriptDelta,
  nativeUnitDone,
  type NativeLimits,
} from './native-server';

const parse = (text: string) => decodeFrame(text).event();
const LIMITS: NativeLimits = {
  max_input_bytes: 1920000,
  max_output_bytes: 4194304,
  max_output_events: 256,
  max_history_chars: 65536,
  cleanup_timeout_s: 30,
};

describe('NativeAudioDeltaTemplate', () => {
  const payload = Buffer.alloc(3528, 1).toString('base64');
  const template = new NativeAudioDeltaTemplate('resp_0', 'item_0', payload);

  it('encodes valid JSON with its event id, the delta fields and the unit as "unit_N"', () => {
    expect(parse(template.encode('e7', 4, 0, 320, 80))).toEqual({
      type: 'response.output_audio.delta',
      event_id: 'e7',
      response_id: 'resp_0',
      item_id: 'item_0',
      output_index: 0,
      content_index: 0,
      delta: payload,
      sglang: { unit_id: 'unit_4', chunk_seq: 0, media_time: { t_start_ms: 320, duration_ms: 80 } },
    });
  });

  it('leads with its type, so the receiver reads it without parsing the payload', () => {
    const frame = decodeFrame(template.encode('e1', 2, 0, 160, 80));
    expect(frame.type).toBe(NativeEvent.audioDelta);
    expect(frame.event().delta).toBe(payload);
  });
});

describe('native server events', () => {
  it('grants exactly the capability set of a native server (the values of sglang-omni\'s GRANTED fixture, the newest limits), and echoes the session asked for', () => {
    const event = parse(nativeSessionUpdated('e1', 'u1', 'mock_0', nativeGrant(22050, 80, LIMITS), { output_modalities: ['audio'], instructions: 'hi', sglang: { sampling: {} } }));
    expect(event).toEqual({
      type: 'session.updated',
      event_id: 'e1',
      client_event_id: 'u1',
      session: {
        output_modalities: ['audio'],
        instructions: 'hi',
        audio: { input: { format: { type: 'audio/pcm', rate: 16000 } }, output: { format: { type: 'audio/pcm', rate: 22050 } } },
        id: 'mock_0',
        object: 'realtime.session',
        model: 'duplex-bench-mock',
        type: 'realtime',
        sglang: {
          sampling: {},
          granted: {
            interaction: 'native',
            native_full_duplex: true,
            proactive_output: false,
            turn_control: [null],
            client_commit: false,
            input_modalities: ['audio'],
            output_modalities: ['audio'],
            input_audio_format: { type: 'audio/pcm', rate: 16000 },
            output_audio_format: { type: 'audio/pcm', rate: 22050 },
            native_unit_ms: 80,
            first_unit_ms: 80,
            microturn_ms: null,
            tail_policy: 'pad',
            supports_server_interrupt: false,
            supports_truncate: false,
            supports_resume: false,
            partial_style: 'append_only',
            pressure_policy: 'reject',
            strict_order: true,
            sampling_parameters: [],
            supports_reference_audio: false,
            limits: LIMITS,
            rejections: [],
          },
        },
      },
    });
  });

  it('names the session in session.created, with no grant yet', () => {
    expect(parse(nativeSessionCreated('e0', 'mock_3'))).toEqual({ type: 'session.created', event_id: 'e0', session: { id: 'mock_3', sglang: { granted: null } } });
  });

  it('acknowledges an append with its own id, seq, accepted_end_ms and the client event id, escaped', () => {
    expect(parse(nativeAccepted('e2', 'a"b', 7, 640))).toEqual({ type: 'sglang.input_audio.accepted', event_id: 'e2', seq: 7, accepted_end_ms: 640, client_event_id: 'a"b' });
  });

  it('closes a unit as "unit_N" with its media time', () => {
    expect(parse(nativeUnitDone('e3', 3, 240, 40))).toEqual({
      type: 'sglang.unit.done',
      event_id: 'e3',
      unit_id: 'unit_3',
      sglang: { unit_id: 'unit_3', chunk_seq: 0, media_time: { t_start_ms: 240, duration_ms: 40 } },
    });
  });

  it('reports ended with tail_policy and drained with its figures, both acknowledging sglang.input_audio.end', () => {
    expect(parse(nativeInputEnded('e4', 'end_1', 180))).toEqual({ type: 'sglang.input_audio.ended', event_id: 'e4', client_event_id: 'end_1', accepted_end_ms: 180, tail_policy: 'pad' });
    expect(parse(nativeDrained('e5', 'end_1', { accepted_end_ms: 180, consumed_ms: 180, discarded_ms: 0, padding_ms: 60 }))).toEqual({
      type: 'sglang.input_audio.drained',
      event_id: 'e5',
      client_event_id: 'end_1',
      accepted_end_ms: 180,
      consumed_ms: 180,
      discarded_ms: 0,
      padding_ms: 60,
    });
  });

  it('ends a response completed/stop, or cancelled/client_closed', () => {
    expect(parse(nativeResponseCreated('e6', 'r'))).toEqual({ type: 'response.created', event_id: 'e6', response: { id: 'r', status: 'in_progress' } });
    expect(parse(nativeResponseDone('e7', 'r', 'stop'))).toEqual({ type: 'response.done', event_id: 'e7', response: { id: 'r', status: 'completed', status_details: { reason: 'stop' } } });
    expect(parse(nativeResponseDone('e8', 'r', 'client_closed', { num_tokens_out: 4 }))).toEqual({
      type: 'response.done',
      event_id: 'e8',
      response: { id: 'r', status: 'cancelled', status_details: { reason: 'client_closed' }, num_tokens_out: 4 },
    });
    expect(parse(nativeAudioDone('e9', 'r', 'i'))).toEqual({ type: 'response.output_audio.done', event_id: 'e9', response_id: 'r', item_id: 'i', output_index: 0, content_index: 0 });
  });

  it('builds transcript deltas with the step\'s token count only when given', () => {
    expect(parse(nativeTranscriptDelta('e1', 'r', 'i', 'hi '))).toEqual({
      type: 'response.output_audio_transcript.delta',
      event_id: 'e1',
      response_id: 'r',
      item_id: 'i',
      output_index: 0,
      content_index: 0,
      delta: 'hi ',
    });
    expect(parse(nativeTranscriptDelta('e2', 'r', 'i', 'x', 3)).sglang).toEqual({ num_tokens: 3 });
  });

  it('closes the session with a reason, echoing session.close when it answers one', () => {
    expect(parse(nativeSessionClosed('e1', 'close_1'))).toEqual({ type: 'session.closed', event_id: 'e1', client_event_id: 'close_1', reason: 'client_closed' });
    expect(parse(nativeSessionClosed('e2', null, 'error'))).toEqual({ type: 'session.closed', event_id: 'e2', reason: 'error' });
  });

  it('builds error events that serverError reads back, fatal or not', () => {
    const fatal = serverError(decodeFrame(nativeError('e1', 'overloaded', 'too many sessions', true, 'a9')));
    expect(fatal.info).toEqual({ event_type: 'error', server_code: 'overloaded', server_type: 'server_error', fatal: true });
    expect(parse(nativeError('e1', 'overloaded', 'too many sessions', true, 'a9'))).toEqual({
      type: 'error',
      event_id: 'e1',
      error: { type: 'server_error', code: 'overloaded', message: 'too many sessions', event_id: 'a9' },
      sglang: { fatal: true },
    });
    expect(serverError(decodeFrame(nativeError('e2', 'slow', 'behind', false))).info.fatal).toBe(false);
  });
});
