import { NATIVE_PROFILES } from '@duplex-bench/protocol';
import { mockSettings } from './mock-options';

/** Bytes of one output unit of silence, as the payload holds it. */
const payloadBytes = (b64: string) => Buffer.from(b64, 'base64').length;

describe('mockSettings', () => {
  it('native append-echo speaks as nemotron: 16 kHz in, the profile unit and output rate, three replies per unit, no model', () => {
    const s = mockSettings({});
    expect(s).toMatchObject({ replies_per_append: 3, input_sample_rate: 16000, output_sample_rate: NATIVE_PROFILES.nemotron.output_sample_rate, unit_ms: NATIVE_PROFILES.nemotron.native_unit_ms, model: null, behaviour: null });
  });

  it('native minicpmo takes its own unit and output rate, and its model turns', () => {
    const s = mockSettings({ profile: 'minicpmo' });
    expect([s.unit_ms, s.output_sample_rate]).toEqual([NATIVE_PROFILES.minicpmo.native_unit_ms, NATIVE_PROFILES.minicpmo.output_sample_rate]);
    expect(s.model).toEqual({ ttfp_ms: 300, rtf: 0.5, burst_units: 1, turn_every_s: 5 });
  });

  it('openai defaults to 24 kHz in and out and 80 ms units; its input rate, output rate and unit may be given', () => {
    expect(mockSettings({ protocol: 'openai' })).toMatchObject({ input_sample_rate: 24000, output_sample_rate: 24000, unit_ms: 80 });
    expect(mockSettings({ protocol: 'openai', input_sample_rate: 16000, output_sample_rate: 16000, unit_ms: 40 })).toMatchObject({ input_sample_rate: 16000, output_sample_rate: 16000, unit_ms: 40 });
  });

  it('keeps native input at 16 kHz whatever input rate is given, and lets flags override the profile unit and output rate', () => {
    expect(mockSettings({ input_sample_rate: 24000, unit_ms: 40, output_sample_rate: 16000 })).toMatchObject({ input_sample_rate: 16000, unit_ms: 40, output_sample_rate: 16000 });
  });

  it('builds one output unit of silence in whole samples of PCM16', () => {
    // 22,050 Hz × 80 ms = 1,764 samples.
    const nemotron = mockSettings({});
    expect(payloadBytes(nemotron.output_payload)).toBe(1764 * 2);
    expect(Buffer.from(nemotron.output_payload, 'base64').every((b) => b === 0)).toBe(true);
    // 22,050 Hz × 10 ms = 220.5 samples: the half sample is dropped.
    expect(payloadBytes(mockSettings({ unit_ms: 10 }).output_payload)).toBe(220 * 2);
  });

  it("lays a caller's model options over the profile's timings", () => {
    expect(mockSettings({ protocol: 'openai', profile: 'model', model: { ttfp_ms: 50, burst_units: 4 } }).model).toEqual({ ttfp_ms: 50, rtf: 0.5, burst_units: 4, turn_every_s: 5 });
  });

  it('keeps nemotron to one response for the session: a turn setting does not change it', () => {
    expect(mockSettings({ profile: 'nemotron' }).model?.turn_every_s).toBe(Infinity);
    expect(mockSettings({ profile: 'nemotron', model: { turn_every_s: 2, ttfp_ms: 10 } }).model).toMatchObject({ turn_every_s: Infinity, ttfp_ms: 10 });
  });

  it('does not share the profile defaults between servers: one server\'s model is its own copy', () => {
    const a = mockSettings({ profile: 'minicpmo' });
    (a.model as { ttfp_ms: number }).ttfp_ms = 1;
    expect(mockSettings({ profile: 'minicpmo' }).model?.ttfp_ms).toBe(300);
  });

  it('refuses the openai model profile on the native dialect', () => {
    expect(() => mockSettings({ profile: 'model' })).toThrow(RangeError);
    expect(() => mockSettings({ protocol: 'native', profile: 'model' })).toThrow(/append-echo, nemotron and minicpmo/);
  });

  it('refuses fewer than 2 native replies per unit, and takes them on openai', () => {
    expect(() => mockSettings({ replies_per_append: 1 })).toThrow(/at least 2 events/);
    expect(mockSettings({ replies_per_append: 2 }).replies_per_append).toBe(2);
    expect(mockSettings({ protocol: 'openai', replies_per_append: 1 }).replies_per_append).toBe(1);
  });

  it('refuses behaviour knobs on append-echo, but for the vllm-omni flavour', () => {
    expect(() => mockSettings({ behaviour: { respond_after_ms: 300 } })).toThrow(/behaviour knobs are for the model mocks/);
    expect(() => mockSettings({ protocol: 'openai', behaviour: { respond_after_ms: 300 } })).toThrow(RangeError);
    expect(() => mockSettings({ protocol: 'openai', openai: { flavor: 'vllm-omni' }, behaviour: { respond_after_ms: 300 } })).not.toThrow();
    expect(() => mockSettings({ profile: 'nemotron', behaviour: { respond_after_ms: 300 } })).not.toThrow();
  });

  it('leaves the behaviour to the server, which fills it once its answer audio is read', () => {
    expect(mockSettings({ profile: 'minicpmo', behaviour: { answer_ms: 1000 } }).behaviour).toBeNull();
  });
});
