import { NATIVE_INPUT_BYTES_PER_MS, NATIVE_INPUT_SAMPLE_RATE, NATIVE_PROFILES, nativeProfileOf } from './native-profiles';

describe('the native model profiles', () => {
  it('holds nemotron to 80 ms units and 22,050 Hz continuous output that stops only after the input ends', () => {
    expect(NATIVE_PROFILES.nemotron).toEqual({ name: 'nemotron', native_unit_ms: 80, output_sample_rate: 22050, output_modalities: ['audio'], stop_requires_eos: true, continuous_output: true });
  });

  it('holds minicpmo to 1 s units and 24,000 Hz turns that may complete while input goes on', () => {
    expect(NATIVE_PROFILES.minicpmo).toEqual({ name: 'minicpmo', native_unit_ms: 1000, output_sample_rate: 24000, output_modalities: ['audio'], stop_requires_eos: false, continuous_output: false });
  });

  it('files each profile under its own name', () => {
    for (const [key, profile] of Object.entries(NATIVE_PROFILES)) expect(profile.name).toBe(key);
  });

  it('finds the profile a grant states by its unit and its output rate together', () => {
    expect(nativeProfileOf(80, 22050)?.name).toBe('nemotron');
    expect(nativeProfileOf(1000, 24000)?.name).toBe('minicpmo');
    // Each figure alone, or the two crossed, is no profile.
    expect(nativeProfileOf(80, 24000)).toBeUndefined();
    expect(nativeProfileOf(1000, 22050)).toBeUndefined();
    expect(nativeProfileOf(80, undefined)).toBeUndefined();
  });

  it('matches the grant’s figures as numbers only, not as text that reads the same', () => {
    expect(nativeProfileOf('80', 22050)).toBeUndefined();
    expect(nativeProfileOf(80, '22050')).toBeUndefined();
    expect(nativeProfileOf(null, null)).toBeUndefined();
  });

  it('takes input as 16 kHz mono PCM16: 32 bytes per ms', () => {
    expect(NATIVE_INPUT_SAMPLE_RATE).toBe(16000);
    expect(NATIVE_INPUT_BYTES_PER_MS).toBe(32);
    // One nemotron unit of input: 80 ms, 2,560 bytes.
    expect(NATIVE_PROFILES.nemotron.native_unit_ms * NATIVE_INPUT_BYTES_PER_MS).toBe(2560);
  });
});
