import { decodeFrame } from './frame';
import { NativeEvent, serverError } from './native';
import {
  defaultNativeGrant,
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
  nativeTextDelta,
  nativeUnitDone,
} from './native-server';

describe('NativeAudioDeltaTemplate', () => {
  const payload = Buffer.alloc(3528, 1).toString('base64');
  const template = new NativeAudioDeltaTemplate('resp_0', 'item_0', payload);

  it('encodes valid JSON with the delta fields and sglang unit_id, chunk_seq and media_time', () => {
    expect(JSON.parse(template.encode(4, 9, 320, 80))).toEqual({
      type: 'response.output_audio.delta',
      response_id: 'resp_0',
      item_id: 'item_0',
      output_index: 0,
      content_index: 0,
      delta: payload,
      sglang: { unit_id: 4, chunk_seq: 9, media_time: { t_start_ms: 320, duration_ms: 80 } },
    });
  });

  it('changes only the unit numbers from one frame to the next', () => {
    const a = JSON.parse(template.encode(0, 0, 0, 80));
    const b = JSON.parse(template.encode(1, 1, 80, 80));
    expect(a.sglang).toEqual({ unit_id: 0, chunk_seq: 0, media_time: { t_start_ms: 0, duration_ms: 80 } });
    expect(b.sglang).toEqual({ unit_id: 1, chunk_seq: 1, media_time: { t_start_ms: 80, duration_ms: 80 } });
    expect({ ...a, sglang: null }).toEqual({ ...b, sglang: null });
  });

  it('leads with its type, so the receiver reads it without parsing the payload', () => {
    const frame = decodeFrame(template.encode(2, 2, 160, 80));
    expect(frame.type).toBe(NativeEvent.audioDelta);
    expect(frame.event().delta).toBe(payload);
  });
});

describe('native server events', () => {
  const parse = (text: string) => decodeFrame(text).event();

  it('grants the whole capability set in session.updated', () => {
    const grant = defaultNativeGrant(16000, 22050, 80);
    const event = parse(nativeSessionUpdated('mock_0', grant));
    expect(event.type).toBe(NativeEvent.sessionUpdated);
    const granted = (event.session as { id: string; sglang: { granted: Record<string, unknown> } }).sglang.granted;
    expect(Object.keys(granted).sort()).toEqual(
      [
        'native_full_duplex',
        'input_audio_format',
        'output_audio_format',
        'native_unit_ms',
        'tail_policy',
        'interaction',
        'client_commit',
        'proactive_output',
        'pressure_policy',
        'strict_order',
        'supports_server_interrupt',
        'supports_resume',
        'supports_truncate',
        'output_modalities',
        'limits',
      ].sort(),
    );
    expect(granted.input_audio_format).toEqual({ type: 'pcm16', sample_rate: 16000, channels: 1 });
    expect(granted.output_audio_format).toEqual({ type: 'pcm16', sample_rate: 22050, channels: 1 });
    expect(granted.native_unit_ms).toBe(80);
    expect(granted.tail_policy).toBe('pad');
  });

  it('names the session in session.created', () => {
    expect(parse(nativeSessionCreated('mock_3'))).toEqual({ type: 'session.created', event_id: 'mock_3_created', session: { id: 'mock_3' } });
  });

  it('acks an append with seq, accepted_end_ms and the client event id, escaped', () => {
    expect(parse(nativeAccepted(7, 640, 'a"b'))).toEqual({
      type: 'sglang.input_audio.accepted',
      seq: 7,
      accepted_end_ms: 640,
      client_event_id: 'a"b',
    });
  });

  it('closes a unit with its media time', () => {
    expect(parse(nativeUnitDone(3, 240, 80))).toEqual({
      type: 'sglang.unit.done',
      unit_id: 3,
      sglang: { unit_id: 3, media_time: { t_start_ms: 240, duration_ms: 80 } },
    });
  });

  it('reports the drain figures with the client event id of sglang.input_audio.end', () => {
    expect(parse(nativeDrained('end_1', { accepted_end_ms: 180, consumed_ms: 240, discarded_ms: 0, padding_ms: 60 }))).toEqual({
      type: 'sglang.input_audio.drained',
      client_event_id: 'end_1',
      accepted_end_ms: 180,
      consumed_ms: 240,
      discarded_ms: 0,
      padding_ms: 60,
    });
  });

  it('builds the response and end-of-input events', () => {
    expect(parse(nativeResponseCreated('r'))).toEqual({ type: 'response.created', response: { id: 'r', status: 'in_progress' } });
    expect(parse(nativeTextDelta('r', 'i', ' '))).toEqual({
      type: 'response.output_text.delta',
      response_id: 'r',
      item_id: 'i',
      output_index: 0,
      content_index: 0,
      delta: ' ',
    });
    expect(parse(nativeInputEnded('end_1', 180))).toEqual({ type: 'sglang.input_audio.ended', client_event_id: 'end_1', accepted_end_ms: 180 });
    expect(parse(nativeAudioDone('r', 'i'))).toEqual({
      type: 'response.output_audio.done',
      response_id: 'r',
      item_id: 'i',
      output_index: 0,
      content_index: 0,
    });
    expect(parse(nativeResponseDone('r'))).toEqual({ type: 'response.done', response: { id: 'r', status: 'completed' } });
    expect(parse(nativeSessionClosed('close_1'))).toEqual({ type: 'session.closed', client_event_id: 'close_1' });
  });

  it('builds error events that serverError reads back, fatal or not', () => {
    const fatal = serverError(decodeFrame(nativeError('overloaded', 'too many sessions', true, 'e9')));
    expect(fatal.info).toEqual({ event_type: 'error', server_code: 'overloaded', server_type: 'server_error', fatal: true });
    expect(parse(nativeError('overloaded', 'too many sessions', true, 'e9'))).toEqual({
      type: 'error',
      error: { type: 'server_error', code: 'overloaded', message: 'too many sessions', event_id: 'e9' },
      sglang: { fatal: true },
    });
    expect(serverError(decodeFrame(nativeError('slow', 'behind', false))).info.fatal).toBe(false);
  });
});
