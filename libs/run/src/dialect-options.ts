import { LEGACY_PROFILES, vllmRealtimeUrl, type TurnDetection } from '@duplex-bench/protocol';
import type { CameraFrames, DialectConfig } from '@duplex-bench/transport';
import type { AdmissionPolicy } from '@duplex-bench/session';
import { RunInputError } from './input-error';

export const DEFAULT_PACKET_MS = 80;

/** How a launched child gets the key: its environment, never its command line. */
export const CHILD_KEY_ENV = 'DUPLEX_BENCH_API_KEY';

export interface DialectOptions {
  protocol: 'native' | 'openai' | 'vllm-omni' | 'sglang-legacy';
  /** vllm-omni: the model named in the URL and in session.update. */
  model?: string;
  /** vllm-omni without --commit-every-s: one commit, at the end (the model decides its own turns). */
  commit_given: boolean;
  /** vllm-omni, a test flag: never acknowledge playback (an ack-only server then holds its turns). */
  no_playback_ack: boolean;
  /** Bearer key for the upgrade request. Never written to run.json, traces or logs. */
  api_key?: string;
  turn_detection: TurnDetection;
  commit_every_s: number;
  sample_rate: number;
  packet_ms: number;
  /** False when `--packet-ms` was not given: an openai server's `chunk_period_ms` may then set it. */
  packet_ms_given: boolean;
  /** vllm-omni: the reference voice as a data URL, and the file it came from (run.json names the file, never the data). */
  ref_audio?: string;
  ref_audio_file?: string;
  /** `--max-frame-bytes`: the largest frame taken from the server (`frame_too_large` past it). */
  max_frame_bytes?: number;
  /** `--max-send-buffer-bytes`: bytes a session may queue unsent (`send_backpressure` past it). */
  max_send_buffer_bytes?: number;
  /** `--video`, `--video-fps`: where the camera frames are, and their rate. */
  video_path?: string;
  video_fps?: number;
  /** The frames, once read (`readVideoFrames`): sent by every session. */
  video?: CameraFrames & { source: string };
  /** vllm-omni: raw fields merged into `session.update.session`. */
  session_extra?: Record<string, unknown>;
  /** How a refused session waits for a slot. */
  admission: AdmissionPolicy;
  /** Bound on the dialect's handshake; the connect bound when not given. */
  handshake_timeout_ms?: number;
  /** Bound on the dialect's close. */
  close_timeout_ms: number;
  /** Native: `lockstep` sends each unit once the previous one is done (`--pacing`); realtime when absent. */
  pacing?: 'realtime' | 'lockstep';
  /** Lockstep: bound on each wait for a unit's `sglang.unit.done`, ms. */
  unit_timeout_ms?: number;
}

/** Lockstep's bound on each unit's wait when none is given: ten 1 s units, far past a healthy server's unit. */
export const DEFAULT_UNIT_TIMEOUT_MS = 10_000;

/** A packet must hold a whole number of samples. */
export function checkPacket(packet_ms: number, sample_rate: number): void {
  if (!Number.isInteger((sample_rate * packet_ms) / 1000)) {
    throw new RunInputError('BAD_PACKET_MS', `--packet-ms ${packet_ms} is not a whole number of samples at ${sample_rate} Hz`);
  }
}

/** The session flow's configuration once the packet size is known. */
export function dialectConfig(o: DialectOptions, packet_ms: number, output_sample_rate?: number): DialectConfig {
  if (o.protocol === 'native') return o.video ? { protocol: 'native', video: o.video } : { protocol: 'native' };
  if (o.protocol === 'sglang-legacy') {
    // Refused with the flags already; this narrows the type.
    if (o.turn_detection === 'none') throw new RunInputError('BAD_TURN_DETECTION', '--profile qwen3-omni-half-duplex takes --turn-detection server_vad or semantic_vad');
    return { protocol: 'sglang-legacy', turn_detection: o.turn_detection, tail_ms: LEGACY_PROFILES['qwen3-omni-half-duplex'].tail_ms };
  }
  const every = Math.max(1, Math.round((o.commit_every_s * 1000) / packet_ms));
  if (o.protocol === 'vllm-omni') {
    // Refused with the flags already; this narrows the type.
    if (o.turn_detection === 'semantic_vad') throw new RunInputError('BAD_TURN_DETECTION', '--turn-detection semantic_vad is for --protocol openai');
    return {
      protocol: 'vllm-omni',
      model: o.model,
      turn_detection: o.turn_detection,
      commit_every_packets: o.commit_given ? every : Infinity,
      output_sample_rate,
      ...(o.no_playback_ack ? { no_playback_ack: true } : {}),
      ...(o.ref_audio !== undefined ? { ref_audio: o.ref_audio } : {}),
      ...(o.session_extra !== undefined ? { session_extra: o.session_extra } : {}),
      ...(o.video ? { video: o.video } : {}),
    };
  }
  return {
    protocol: 'openai',
    turn_detection: o.turn_detection,
    commit_every_packets: every,
    output_sample_rate,
  };
}

/** What every session of a run shares about its server: where, which dialect, which bounds and rates. */
export function connectionSettings(
  o: DialectOptions & { url: string; connect_timeout_ms: number; drain_timeout_ms?: number; output_sample_rate: number; output_sample_rate_given: boolean },
  packet_ms: number,
) {
  return {
    url: sessionUrl(o, o.url),
    dialect: dialectConfig(o, packet_ms, o.output_sample_rate_given ? o.output_sample_rate : undefined),
    headers: authHeaders(o),
    connect_timeout_ms: o.connect_timeout_ms,
    ...(o.max_frame_bytes !== undefined ? { max_frame_bytes: o.max_frame_bytes } : {}),
    ...(o.max_send_buffer_bytes !== undefined ? { max_send_buffer_bytes: o.max_send_buffer_bytes } : {}),
    ...(o.handshake_timeout_ms !== undefined ? { handshake_timeout_ms: o.handshake_timeout_ms } : {}),
    close_timeout_ms: o.close_timeout_ms,
    admission: o.admission,
    ...(o.drain_timeout_ms !== undefined ? { drain_timeout_ms: o.drain_timeout_ms } : {}),
    output_sample_rate: o.output_sample_rate,
    output_sample_rate_given: o.output_sample_rate_given,
    ...(o.pacing === 'lockstep' ? { lockstep: { unit_timeout_ms: o.unit_timeout_ms ?? DEFAULT_UNIT_TIMEOUT_MS } } : {}),
  };
}

/** The URL sessions connect to: vLLM-Omni's client adds `duplex=1`, `model` and `autostart=0`. */
export function sessionUrl(o: DialectOptions, url: string): string {
  return o.protocol === 'vllm-omni' ? vllmRealtimeUrl(url, o.model) : url;
}

/** Upgrade request headers: the bearer key, when there is one. */
export function authHeaders(o: DialectOptions): Record<string, string> | undefined {
  return o.api_key ? { Authorization: `Bearer ${o.api_key}` } : undefined;
}

const SECRET_FLAGS = ['--api-key'];

/** The command line with secret values replaced, for run.json and messages. */
export function redactArgv(argv: string[]): string[] {
  return rewriteSecrets(argv, (flag, joined) => (joined ? [`${flag}=[redacted]`] : [flag, '[redacted]']));
}

/** The command line without secret flags (a launched child gets the key through its environment). */
export function withoutSecrets(argv: string[]): string[] {
  return rewriteSecrets(argv, () => []);
}

/** `argv` with each secret flag and its value replaced by `by(flag, written as --flag=value)`. */
function rewriteSecrets(argv: string[], by: (flag: string, joined: boolean) => string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const flag = SECRET_FLAGS.find((f) => arg === f || arg.startsWith(`${f}=`));
    if (!flag) {
      out.push(arg);
      continue;
    }
    if (arg === flag) i++;
    out.push(...by(flag, arg !== flag));
  }
  return out;
}

/** The dialect settings run.json records (the key only as whether one was sent). */
export function dialectRecord(o: DialectOptions & { output_sample_rate: number }) {
  return {
    protocol: o.protocol,
    input_sample_rate: o.sample_rate,
    output_sample_rate_assumed: o.output_sample_rate,
    ...(o.protocol !== 'native' ? { turn_detection: o.turn_detection, ...(o.turn_detection === 'none' ? { commit_every_s: o.commit_given || o.protocol === 'openai' ? o.commit_every_s : 'end of input only' } : {}) } : {}),
    ...(o.model !== undefined ? { model: o.model } : {}),
    ...(o.ref_audio_file !== undefined ? { ref_audio: { file: o.ref_audio_file, data_url_chars: o.ref_audio?.length ?? 0 } } : {}),
    ...(o.video ? { video: { source: o.video.source, frames: o.video.base64.length, fps: o.video.fps, largest_bytes: Math.max(...o.video.bytes) } } : {}),
    ...(o.session_extra !== undefined ? { session_extra: o.session_extra } : {}),
    ...(o.protocol === 'sglang-legacy' ? { profile: LEGACY_PROFILES['qwen3-omni-half-duplex'] } : {}),
    // sglang-omni's oracle reads the retry limit a recording used as max_admission_attempts.
    max_admission_attempts: o.admission.retries,
    admission: o.admission,
    ...(o.handshake_timeout_ms !== undefined ? { handshake_timeout_ms: o.handshake_timeout_ms } : {}),
    close_timeout_ms: o.close_timeout_ms,
    ...(o.protocol === 'native' ? { pacing: o.pacing ?? 'realtime', ...(o.pacing === 'lockstep' ? { unit_timeout_ms: o.unit_timeout_ms ?? DEFAULT_UNIT_TIMEOUT_MS } : {}) } : {}),
    bearer_key_sent: o.api_key !== undefined,
  };
}
