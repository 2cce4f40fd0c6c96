import type { TimerHost } from '@duplex-bench/pacer';
import { LeadingSilence } from './leading-silence';
import { LEGACY_PROFILES, NATIVE_PROFILES } from '@duplex-bench/protocol';
import type { MockBehaviourOptions } from './behaviour-settings';
import type { MockSettings } from './mock-dialect';
import type { ModelOptions } from './model-session';
import type { OpenAIMockOptions } from './openai-mock-session';

export interface MockServerOptions {
  /** Wire dialect: sglang-omni `native` (default) or OpenAI Realtime `openai`. */
  protocol?: 'native' | 'openai';
  /** The openai dialect's settings: event names, vLLM-Omni extensions, VAD silence. */
  openai?: Partial<Pick<OpenAIMockOptions, 'names' | 'vllm' | 'silence_ms'>> & {
    /** `vllm-omni`: vLLM-Omni's own duplex flow (client speaks first, ack-only playback, event journal, slots held after a disconnect). */
    flavor?: 'openai' | 'vllm-omni';
    /** vllm-omni: every Kth turn the model keeps listening (0 never). */
    listen_every?: number;
    /** vllm-omni: how long a session ended without `session.close` holds its slot (default 30 s). */
    disconnect_grace_ms?: number;
    /** vllm-omni: the wait for the client's first message (default 10 s). */
    config_timeout_ms?: number;
    /** vllm-omni: unacknowledged journal bytes that ask for a resync (default 8 MiB). */
    journal_max_bytes?: number;
    /** vllm-omni: refuse an audio session without a reference voice (`ref_audio_required`), as MiniCPM-o 4.5 does. */
    require_ref_audio?: boolean;
    /** vllm-omni: a turn-based model (Qwen3-Omni) that answers only committed turns (VllmMockOptions.turn_based). */
    turn_based?: boolean;
    /** vllm-omni: camera frames as `input_image` items, not on the appends (VllmMockOptions.image_items). */
    image_items?: boolean;
    /** vllm-omni: every frame and the close leave this many ms late, in order (VllmMockOptions.send_lag_ms). */
    send_lag_ms?: number;
  };
  /** Serve `wss://` with this key and certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** append-echo: events sent back per input unit: an audio delta, transcript deltas, then `sglang.unit.done` (native; at least 2). */
  replies_per_append?: number;
  /** Output rate; native: the profile's unless given. */
  output_sample_rate?: number;
  /** openai only: the native dialect's input is 16 kHz. */
  input_sample_rate?: number;
  /** Input unit; native: the profile's `native_unit_ms` unless given. */
  unit_ms?: number;
  /** Sessions held at once; further upgrades get HTTP 503. */
  max_sessions?: number;
  /** Each text frame sent carries its send time on the host's monotonic clock, last (protocol `stampSent`): the probe's receive delay. */
  stamp_sends?: boolean;
  /** Model profiles: past this many active sessions the model cannot keep up (see ModelOptions.load). */
  capacity_sessions?: number;
  /**
   * How the server answers. `append-echo`: at once, no model. Native: `nemotron` (80 ms units,
   * 22,050 Hz, one response per session) or `minicpmo` (1 s units, 24,000 Hz, turns). openai:
   * `model` (turns, first-packet latency, real-time factor, bursts).
   */
  profile?: MockProfile;
  model?: Partial<ModelOptions>;
  /**
   * Behaviour knobs of the model mocks (native nemotron and minicpmo, openai `model`, vllm-omni):
   * `respond_after_ms` (default 500), `answer_ms` (3,000), `stop_after_ms` (200),
   * `takeover_after_ms` (0: never), `yield_on_backchannel`, `conversation`; with
   * `capacity_sessions` respond and stop times grow by max(1, active/N). Given at all, the mock
   * decodes its input, hears the user by energy, answers with voiced speech (answer.wav) and
   * silence otherwise, and logs what it did in its stats (`behaviour`); the rules are
   * BehaviourSession's. Not given: every mock behaves as without it, its input never decoded.
   */
  behaviour?: MockBehaviourOptions;
  /**
   * Model mocks (nemotron, minicpmo, openai model, the vllm-omni flavour) without behaviour knobs:
   * each response opens with this much silence and then speaks (a tone at -20 dBFS) instead of
   * staying silent, so a client's audible TTFP sits this far past its TTFP.
   */
  leading_silence_ms?: number;
  /**
   * native: the grant lists image input (`input_modalities: ["audio", "image"]`, `input_image_format`)
   * and the mock takes `sglang.input_image.append` as sglang-omni's server does; each frame costs
   * `frame_cost_ms` of its unit's compute (grown with the load past `capacity_sessions`), so a
   * sweep shows the knee move with video.
   */
  images?: { max_per_unit?: number; max_bytes?: number; frame_cost_ms?: number };
  /** The clock and timers of every wait: model turns and bursts, server VAD, the close and disconnect graces (default: real ones); tests pass virtual time. */
  clock?: TimerHost;
}

export type MockProfile = 'append-echo' | 'nemotron' | 'minicpmo' | 'model' | 'qwen3-omni-half-duplex';

/** Model timings of each profile; a caller's `model` options override them. */
const MODEL_DEFAULTS: Record<Exclude<MockProfile, 'append-echo'>, ModelOptions> = {
  // One response for the whole session: no turn ever starts after the first.
  nemotron: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity },
  minicpmo: { ttfp_ms: 300, rtf: 0.5, burst_units: 1, turn_every_s: 5 },
  model: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: 5 },
  // Turns the server's VAD finds (turn_every_s unused); 4 units of 20 ms in each audio delta.
  'qwen3-omni-half-duplex': { ttfp_ms: 300, rtf: 0.5, burst_units: 4, turn_every_s: Infinity },
};

/** The options resolved against the profile: the unit, the rates and the model timings every dialect works from. */
export function mockSettings(options: MockServerOptions): MockSettings {
  const replies = options.replies_per_append ?? 3;
  const protocol = options.protocol ?? 'native';
  const profile = options.profile ?? 'append-echo';
  if (isLegacyProfile(profile)) return legacyMockSettings(options, profile);
  if (protocol === 'native' && profile === 'model') throw new RangeError('the native mock has the profiles append-echo, nemotron and minicpmo');
  const vllmFlavor = protocol === 'openai' && options.openai?.flavor === 'vllm-omni';
  if (options.behaviour && profile === 'append-echo' && !vllmFlavor) throw new RangeError('behaviour knobs are for the model mocks: native nemotron or minicpmo, openai model, or the vllm-omni flavour');
  if (protocol === 'native' && replies < 2) throw new RangeError('the native append-echo mock sends at least 2 events per unit (audio, unit done)');
  // Native: the profile fixes unit and output rate (append-echo speaks as nemotron); flags may override.
  const native = NATIVE_PROFILES[profile === 'minicpmo' ? 'minicpmo' : 'nemotron'];
  const input_rate = protocol === 'openai' ? (options.input_sample_rate ?? 24000) : 16000;
  const output_rate = options.output_sample_rate ?? (protocol === 'openai' ? 24000 : native.output_sample_rate);
  const unit_ms = options.unit_ms ?? (protocol === 'openai' ? 80 : native.native_unit_ms);
  // One output unit of audio per input unit, in whole samples.
  const output_unit_bytes = Math.floor((output_rate * unit_ms) / 1000) * 2;
  const model: ModelOptions | null = profile === 'append-echo' ? null : { ...MODEL_DEFAULTS[profile], ...options.model };
  // nemotron keeps one response for the whole session: no turn setting changes that.
  if (model && profile === 'nemotron') model.turn_every_s = Infinity;
  return {
    replies_per_append: replies,
    input_sample_rate: input_rate,
    output_sample_rate: output_rate,
    unit_ms,
    output_payload: Buffer.alloc(output_unit_bytes).toString('base64'),
    model,
    leading: options.leading_silence_ms !== undefined && (model !== null || vllmFlavor) ? new LeadingSilence(output_rate, unit_ms, options.leading_silence_ms) : null,
    // Filled by the server once its answer audio is read.
    behaviour: null,
  };
}

/** Whether a profile is served over sglang-omni's legacy turn-based protocol (whatever `protocol` says). */
export function isLegacyProfile(profile: MockProfile | undefined): profile is 'qwen3-omni-half-duplex' {
  return profile === 'qwen3-omni-half-duplex';
}

/**
 * The legacy profile's settings: 16 kHz input, the profile's 24 kHz output and 20 ms unit
 * (profiles.py), output deltas of `burst_units` units; `leading_silence_ms` counts in deltas.
 */
function legacyMockSettings(options: MockServerOptions, profile: 'qwen3-omni-half-duplex'): MockSettings {
  if (options.protocol === 'openai') throw new RangeError(`--profile ${profile} speaks sglang-omni's legacy protocol: no --protocol openai`);
  if (options.behaviour) throw new RangeError(`behaviour knobs are not written for --profile ${profile}`);
  const legacy = LEGACY_PROFILES[profile];
  const output_rate = options.output_sample_rate ?? legacy.output_sample_rate;
  const unit_ms = options.unit_ms ?? legacy.native_unit_ms;
  const model: ModelOptions = { ...MODEL_DEFAULTS[profile], ...options.model };
  const delta_ms = unit_ms * model.burst_units;
  return {
    replies_per_append: 0,
    input_sample_rate: legacy.input_sample_rate,
    output_sample_rate: output_rate,
    unit_ms,
    output_payload: Buffer.alloc(Math.floor((output_rate * delta_ms) / 1000) * 2).toString('base64'),
    model,
    leading: options.leading_silence_ms !== undefined ? new LeadingSilence(output_rate, delta_ms, options.leading_silence_ms) : null,
    behaviour: null,
  };
}
