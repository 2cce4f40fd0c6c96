/**
 * The two model profiles a native (sglang-omni duplex) server is held to. Facts from the public
 * sglang-omni repository at commit 1035e3ff, `benchmarks/duplex/profiles.py`.
 */
export type NativeProfileName = 'nemotron' | 'minicpmo';

export interface NativeProfile {
  name: NativeProfileName;
  /** Input the server takes per native unit (`native_unit_ms` of the grant). */
  native_unit_ms: number;
  /** PCM rate of the output (`output_audio_format.rate` of the grant). */
  output_sample_rate: number;
  /** Modalities the granted `output_modalities` must include. */
  output_modalities: readonly string[];
  /** A response may complete (`stop`) only after the client's `sglang.input_audio.end`. */
  stop_requires_eos: boolean;
  /** One response spans the session and every input unit yields one unit of output audio. */
  continuous_output: boolean;
}

export const NATIVE_PROFILES: Readonly<Record<NativeProfileName, NativeProfile>> = {
  // nemotron-voicechat: 80 ms units, 22,050 Hz, continuous output.
  nemotron: { name: 'nemotron', native_unit_ms: 80, output_sample_rate: 22050, output_modalities: ['audio'], stop_requires_eos: true, continuous_output: true },
  // minicpmo: 1 s units, 24,000 Hz, turns that complete while input goes on.
  minicpmo: { name: 'minicpmo', native_unit_ms: 1000, output_sample_rate: 24000, output_modalities: ['audio'], stop_requires_eos: false, continuous_output: false },
};

/** The profile whose unit and output rate a grant states, if one matches. */
export function nativeProfileOf(native_unit_ms: unknown, output_sample_rate: unknown): NativeProfile | undefined {
  return Object.values(NATIVE_PROFILES).find((p) => p.native_unit_ms === native_unit_ms && p.output_sample_rate === output_sample_rate);
}

/** Input PCM the native dialect fixes: 16 kHz mono PCM16, 32 bytes per ms. */
export const NATIVE_INPUT_SAMPLE_RATE = 16000;
export const NATIVE_INPUT_BYTES_PER_MS = (NATIVE_INPUT_SAMPLE_RATE * 2) / 1000;
