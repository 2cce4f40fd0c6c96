import { decodeFrame } from './frame';
import {
  assertSafeId,
  isKnownNativeType,
  NativeEvent,
  nativeAppend,
  nativeInputEnd,
  nativeSessionClose,
  nativeSessionUpdate,
  readNativeGrant,
  nativeImageAppend,
  serverError,
} from './native';

describe('native client events', () => {
  it('builds an append that is valid JSON with exactly the dialect fields', () => {
    const audio = Buffer.alloc(2560, 7).toString('base64');
    const text = nativeAppend('s1_append_12', 12, 960, Buffer.from(audio)).toString();
    expect(JSON.parse(text)).toEqual({
      type: 'input_audio_buffer.append',
      event_id: 's1_append_12',
      audio,
      sglang: { seq: 12, t_start_ms: 960 },
    });
    expect(decodeFrame(text).type).toBe(NativeEvent.append);
  });

  it('keeps a fractional t_start_ms and an empty audio payload valid', () => {
    expect(JSON.parse(nativeAppend('e', 0, 12.5, Buffer.alloc(0)).toString())).toEqual({
      type: NativeEvent.append,
      event_id: 'e',
      audio: '',
      sglang: { seq: 0, t_start_ms: 12.5 },
    });
  });

  it('asks only for audio output in session.update, as sglang-omni\'s own client does', () => {
    expect(JSON.parse(nativeSessionUpdate('u1'))).toEqual({ type: 'session.update', event_id: 'u1', session: { output_modalities: ['audio'] } });
  });

  it('builds input end and session close with their event ids', () => {
    expect(JSON.parse(nativeInputEnd('end_1'))).toEqual({ type: 'sglang.input_audio.end', event_id: 'end_1' });
    expect(JSON.parse(nativeSessionClose('close_1'))).toEqual({ type: 'session.close', event_id: 'close_1' });
  });

  it('holds ids spliced into frames to a safe alphabet', () => {
    expect(assertSafeId('s-1_append.3:x')).toBe('s-1_append.3:x');
    for (const bad of ['', 'a"b', 'a\\b', 'a b', 'é', 'a\nb']) expect(() => assertSafeId(bad)).toThrow(RangeError);
  });

  it('knows its own event types and no others', () => {
    for (const type of Object.values(NativeEvent)) expect(isKnownNativeType(type)).toBe(true);
    expect(isKnownNativeType('response.audio.delta')).toBe(false);
    expect(isKnownNativeType('')).toBe(false);
  });
});

describe('serverError', () => {
  const decode = (event: unknown) => decodeFrame(JSON.stringify(event));

  it('reads fatal from sglang.fatal, with the server code, type and message', () => {
    const error = serverError(
      decode({ type: 'error', error: { type: 'invalid_request', code: 'bad_seq', message: 'seq went back', event_id: 'e3' }, sglang: { fatal: true } }),
    );
    expect(error.name).toBe('ProtocolError');
    expect(error.code).toBe('SERVER_ERROR');
    expect(error.info).toEqual({ event_type: 'error', server_code: 'bad_seq', server_type: 'invalid_request', fatal: true });
    expect(error.message).toContain('bad_seq');
    expect(error.message).toContain('seq went back');
  });

  it('is not fatal when sglang.fatal is false, absent, or not the boolean true', () => {
    const base = { type: 'error', error: { type: 'server_error', code: 'slow', message: 'behind' } };
    expect(serverError(decode({ ...base, sglang: { fatal: false } })).info.fatal).toBe(false);
    expect(serverError(decode(base)).info.fatal).toBe(false);
    expect(serverError(decode({ ...base, sglang: { fatal: 'true' } })).info.fatal).toBe(false);
  });

  it('does not take fatal from the error object itself', () => {
    expect(serverError(decode({ type: 'error', error: { code: 'x', fatal: true } })).info.fatal).toBe(false);
  });

  it('tolerates an error event with no error object', () => {
    const error = serverError(decode({ type: 'error' }));
    expect(error.code).toBe('SERVER_ERROR');
    expect(error.info.server_code).toBeUndefined();
    expect(error.info.server_type).toBeUndefined();
    expect(error.message).toContain('no message');
  });
});

describe('readNativeGrant', () => {
  it('takes the output rate from output_audio_format.rate and the unit from native_unit_ms', () => {
    const updated = { type: 'session.updated', session: { id: 's', sglang: { granted: { output_audio_format: { type: 'audio/pcm', rate: 24000 }, native_unit_ms: 1000 } } } };
    expect(readNativeGrant(updated)).toEqual({ output_sample_rate: 24000, native_unit_ms: 1000 });
  });

  it('ignores a sample_rate key, which real servers do not send, and values that are not positive numbers', () => {
    const updated = { session: { sglang: { granted: { output_audio_format: { sample_rate: 22050 }, native_unit_ms: '80' } } } };
    expect(readNativeGrant(updated)).toEqual({});
    expect(readNativeGrant({})).toEqual({});
  });

  it("reads image input: input_modalities and input_image_format's frame count (newer max_frames_per_unit, older max_per_unit) and bytes", () => {
    const granted = (format: Record<string, unknown>) => ({ session: { sglang: { granted: { native_unit_ms: 1000, input_modalities: ['audio', 'image'], input_image_format: { types: ['image/jpeg'], max_bytes: 524288, ...format } } } } });
    expect(readNativeGrant(granted({ max_frames_per_unit: 2, max_per_unit: 9 }))).toEqual({ native_unit_ms: 1000, input_modalities: ['audio', 'image'], image_limits: { max_per_unit: 2, max_bytes: 524288 } });
    expect(readNativeGrant(granted({ max_per_unit: 4 })).image_limits).toEqual({ max_per_unit: 4, max_bytes: 524288 });
  });

  it('builds a camera frame event as their clients send it: type, event_id, image, sglang.t_ms', () => {
    const frame = JSON.parse(nativeImageAppend('s0_a13_i0', Buffer.from('/9j/4AAQ', 'latin1'), 1000).toString());
    expect(frame).toEqual({ type: 'sglang.input_image.append', event_id: 's0_a13_i0', image: '/9j/4AAQ', sglang: { t_ms: 1000 } });
  });
});
