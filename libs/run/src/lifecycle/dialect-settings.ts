import { readFileSync } from 'node:fs';
import { UsageError } from '@duplex-bench/cli';
import { OPENAI_PCM_RATE, wavDataUrl, type TurnDetection } from '@duplex-bench/protocol';
import { sendsCameraFrames, VLLM_TIMEOUTS } from '@duplex-bench/transport';
import { checkPacket, CHILD_KEY_ENV, DEFAULT_PACKET_MS, DEFAULT_UNIT_TIMEOUT_MS, type DialectOptions } from '../dialect-options';
import { RunInputError } from '../input-error';
import { parseLegacyProfileOptions } from './legacy-settings';
import { NATIVE_ADMISSION, type AdmissionPolicy } from '@duplex-bench/session';

/** The dialect flags as parsed (DIALECT_FLAGS), before they are checked against each other. */
export interface DialectFlagValues {
  protocol: string;
  /** `run --profile`: a model served over sglang-omni's legacy protocol (it sets the dialect). */
  profile?: string;
  model?: string;
  'no-playback-ack'?: boolean;
  'api-key'?: string;
  'turn-detection'?: string;
  'commit-every-s'?: number;
  'sample-rate'?: number;
  'packet-ms'?: number;
  pacing?: string;
  'unit-timeout-s'?: number;
  'ref-audio'?: string;
  video?: string;
  'video-fps'?: number;
  'session-extra'?: string;
  'admission-retries'?: number;
  'admission-backoff-ms'?: number;
  'handshake-timeout-s'?: number;
  'close-timeout-s'?: number;
  'max-frame-bytes'?: number;
  'max-send-buffer-bytes'?: number;
}

/** The reference voice: a RIFF/WAVE file's bytes, whole, as a data URL. */
function readRefAudio(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new UsageError(`--ref-audio: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') {
    throw new UsageError(`--ref-audio: ${file} is not a WAV file (no RIFF/WAVE header)`);
  }
  return wavDataUrl(bytes);
}

function parseSessionExtra(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`--session-extra is not JSON: ${text.slice(0, 80)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('--session-extra must be a JSON object');
  return value as Record<string, unknown>;
}

/** How long a session waits for a full server: their clients' budgets, unless the flags say. */
function admissionPolicy(protocol: DialectOptions['protocol'], retries?: number, backoff_ms?: number): AdmissionPolicy {
  if (protocol !== 'vllm-omni') {
    const fixed = backoff_ms ?? NATIVE_ADMISSION.backoff_ms;
    return { retries: retries ?? NATIVE_ADMISSION.retries, backoff_ms: fixed, max_backoff_ms: fixed };
  }
  const base = backoff_ms ?? 250;
  return { retries: retries ?? 12, backoff_ms: base, max_backoff_ms: Math.max(5000, base) };
}

/** The input rate a dialect streams when `--sample-rate` is not given. */
export function defaultSampleRate(protocol: DialectOptions['protocol']): number {
  return protocol === 'openai' ? OPENAI_PCM_RATE : 16000;
}

/**
 * Lines to warn with before a run: an openai rate other than 24,000 Hz is sent as asked (a duplex
 * server behind the dialect may take it), though OpenAI itself refuses it.
 */
export function dialectWarnings(o: DialectOptions): string[] {
  if (o.protocol !== 'openai' || o.sample_rate === OPENAI_PCM_RATE) return [];
  return [`warning: --sample-rate ${o.sample_rate}: OpenAI itself accepts only ${OPENAI_PCM_RATE} Hz for audio/pcm input; sent as asked, for a server that takes it`];
}

/** Validates the dialect flags; `env` supplies `OPENAI_API_KEY` for the openai dialect. */
export function parseDialectOptions(f: DialectFlagValues, env: NodeJS.ProcessEnv = process.env, cameras: { dataset?: boolean } = {}): DialectOptions {
  if (f.profile !== undefined) return parseLegacyProfileOptions(f, env);
  const protocol = f.protocol as DialectOptions['protocol'];
  if (protocol === 'native') {
    if (f['turn-detection'] !== undefined || f['commit-every-s'] !== undefined) {
      throw new UsageError('--turn-detection and --commit-every-s are for --protocol openai');
    }
    if (f['sample-rate'] !== undefined && f['sample-rate'] !== 16000) throw new UsageError('--sample-rate must be 16000 for the native dialect');
  }
  if (f['turn-detection'] === 'semantic_vad' && protocol !== 'openai') throw new UsageError('--turn-detection semantic_vad is for --protocol openai (vllm-omni takes server_vad or none)');
  if (f.pacing !== undefined && protocol !== 'native') throw new UsageError('--pacing is for --protocol native (sglang-omni units)');
  if (f['unit-timeout-s'] !== undefined && f.pacing !== 'lockstep') throw new UsageError('--unit-timeout-s is for --pacing lockstep');
  if (f.model !== undefined && protocol !== 'vllm-omni') throw new UsageError('--model is for --protocol vllm-omni');
  if (f['no-playback-ack'] && protocol !== 'vllm-omni') throw new UsageError('--no-playback-ack is for --protocol vllm-omni');
  if (f['ref-audio'] !== undefined && protocol !== 'vllm-omni') throw new UsageError('--ref-audio is for --protocol vllm-omni');
  if (f['session-extra'] !== undefined && protocol !== 'vllm-omni') throw new UsageError('--session-extra is for --protocol vllm-omni');
  if (f.video !== undefined && !sendsCameraFrames(protocol)) throw new UsageError('--video is for --protocol native or vllm-omni');
  // A recording's dataset may give each sample its own camera, read at --video-fps too.
  if (f['video-fps'] !== undefined && f.video === undefined && !cameras.dataset) throw new UsageError('--video-fps needs --video');
  // vLLM-Omni's client sends turn_detection null by default: the model decides its own turns.
  const turn_detection = (f['turn-detection'] ?? (protocol === 'vllm-omni' ? 'none' : 'server_vad')) as TurnDetection;
  if (f['commit-every-s'] !== undefined && turn_detection !== 'none') {
    throw new UsageError('--commit-every-s needs --turn-detection none (with server_vad the server finds the turns)');
  }
  const sample_rate = f['sample-rate'] ?? defaultSampleRate(protocol);
  const packet_ms = f['packet-ms'] ?? DEFAULT_PACKET_MS;
  try {
    checkPacket(packet_ms, sample_rate);
  } catch (err) {
    // A flag parser throws UsageError, whatever lib found the value wrong.
    throw err instanceof RunInputError ? new UsageError(err.message, { cause: err }) : err;
  }
  const api_key = f['api-key'] ?? (env[CHILD_KEY_ENV] || undefined) ?? (protocol === 'openai' ? env.OPENAI_API_KEY || undefined : undefined);
  if (api_key !== undefined && !/^[\x21-\x7e]+$/.test(api_key)) throw new UsageError('--api-key must be printable ASCII without spaces');
  return {
    protocol,
    ...(f.model !== undefined ? { model: f.model } : {}),
    api_key,
    turn_detection,
    commit_every_s: f['commit-every-s'] ?? 1,
    commit_given: f['commit-every-s'] !== undefined,
    no_playback_ack: f['no-playback-ack'] === true,
    sample_rate,
    packet_ms,
    packet_ms_given: f['packet-ms'] !== undefined,
    ...(f['ref-audio'] !== undefined ? { ref_audio: readRefAudio(f['ref-audio']), ref_audio_file: f['ref-audio'] } : {}),
    ...(f['session-extra'] !== undefined ? { session_extra: parseSessionExtra(f['session-extra']) } : {}),
    ...(f.video !== undefined ? { video_path: f.video } : {}),
    ...(f['max-frame-bytes'] !== undefined ? { max_frame_bytes: f['max-frame-bytes'] } : {}),
    ...(f['max-send-buffer-bytes'] !== undefined ? { max_send_buffer_bytes: f['max-send-buffer-bytes'] } : {}),
    ...(f['video-fps'] !== undefined ? { video_fps: f['video-fps'] } : {}),
    admission: admissionPolicy(protocol, f['admission-retries'], f['admission-backoff-ms']),
    ...(f['handshake-timeout-s'] !== undefined ? { handshake_timeout_ms: f['handshake-timeout-s'] * 1000 } : protocol === 'vllm-omni' ? { handshake_timeout_ms: VLLM_TIMEOUTS.handshake_timeout_ms } : {}),
    close_timeout_ms: f['close-timeout-s'] !== undefined ? f['close-timeout-s'] * 1000 : protocol === 'vllm-omni' ? VLLM_TIMEOUTS.close_timeout_ms : 5000,
    ...(f.pacing === 'lockstep' ? { pacing: 'lockstep' as const, unit_timeout_ms: (f['unit-timeout-s'] ?? DEFAULT_UNIT_TIMEOUT_MS / 1000) * 1000 } : {}),
  };
}

