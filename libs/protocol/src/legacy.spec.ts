import { nativeAppend } from './native';
import {
  LEGACY_PROFILES,
  LegacyEvent,
  isKnownLegacyType,
  legacyAppend,
  legacyConfigure,
  legacyProbe,
  legacyResponseId,
  legacyTerminal,
  legacyTurnDetectionOf,
} from './legacy';

describe('legacy client events', () => {
  it('configures text and audio out with the chosen detector, and nothing else', () => {
    expect(JSON.parse(legacyConfigure('e0', 'semantic_vad'))).toEqual({
      type: 'session.update',
      event_id: 'e0',
      session: { modalities: ['text', 'audio'], turn_detection: { type: 'semantic_vad' } },
    });
  });

  it('probes liveness with an empty session.update', () => {
    expect(JSON.parse(legacyProbe('p1'))).toEqual({ type: 'session.update', event_id: 'p1', session: {} });
  });

  it('appends the native frame, seq and t_start_ms included', () => {
    const audio = Buffer.from('AAAA');
    const sent = legacyAppend('a3', 3, 240, audio);
    expect(sent.equals(nativeAppend('a3', 3, 240, audio))).toBe(true);
    expect(JSON.parse(sent.toString())).toMatchObject({ type: 'input_audio_buffer.append', sglang: { seq: 3, t_start_ms: 240 } });
  });

  it('states the qwen3-omni-half-duplex profile as profiles.py does: 20 ms units, 24 kHz out, 80 ms packets at 16 kHz, a 1 s tail', () => {
    expect(LEGACY_PROFILES['qwen3-omni-half-duplex']).toMatchObject({ native_unit_ms: 20, output_sample_rate: 24000, input_sample_rate: 16000, packet_ms: 80, tail_ms: 1000 });
  });
});

describe('reading legacy server events', () => {
  it('knows every type the protocol defines and no other', () => {
    for (const type of Object.values(LegacyEvent)) expect(isKnownLegacyType(type)).toBe(true);
    expect(isKnownLegacyType('response.output_audio.delta')).toBe(false);
    expect(isKnownLegacyType('sglang.unit.done')).toBe(false);
  });

  it.each([
    [{ session: { turn_detection: { type: 'server_vad' } } }, 'server_vad'],
    [{ session: { turn_detection: {} } }, null],
    [{ session: { turn_detection: null } }, null],
    [{ session: [] }, null],
    [{}, null],
    [{ session: { turn_detection: { type: 7 } } }, 7],
  ])('finds the echoed detector type in %j', (event, type) => {
    expect(legacyTurnDetectionOf(event)).toBe(type);
  });

  it('takes a response id from response.id first, then response_id', () => {
    expect(legacyResponseId({ response: { id: 'r1' }, response_id: 'r2' })).toBe('r1');
    expect(legacyResponseId({ response: { id: 5 } })).toBeNull();
    expect(legacyResponseId({ response_id: 'r2' })).toBe('r2');
    expect(legacyResponseId({ response_id: 2 })).toBeNull();
  });

  it('reads response.done status and reason, null where absent', () => {
    expect(legacyTerminal({ response: { status: 'cancelled', status_details: { reason: 'turn_detected' } } })).toEqual({ status: 'cancelled', reason: 'turn_detected' });
    expect(legacyTerminal({ response: { status: 'completed', status_details: null } })).toEqual({ status: 'completed', reason: null });
    expect(legacyTerminal({})).toEqual({ status: null, reason: null });
  });
});
