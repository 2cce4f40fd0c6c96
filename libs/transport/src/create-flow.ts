import { VLLM_SERVER_VAD_TAIL_MS } from '@duplex-bench/protocol';
import { LegacyFlow } from './legacy-flow';
import { NativeFlow } from './native-flow';
import { OpenAIFlow } from './openai-flow';
import { VllmOmniFlow } from './vllm-omni-flow';
import type { CameraFrames, DialectConfig, SessionFlow } from './flow';

/** A new flow for one session; `session_id` prefixes the event ids the flow sends. */
export function createSessionFlow(config: DialectConfig, session_id: string): SessionFlow {
  switch (config.protocol) {
    case 'native':
      return new NativeFlow(session_id, config.video);
    case 'openai':
      return new OpenAIFlow(session_id, config);
    case 'vllm-omni':
      return new VllmOmniFlow(session_id, config);
    case 'sglang-legacy':
      return new LegacyFlow(session_id, config);
    default: {
      const never: never = config;
      throw new Error(`unknown dialect ${JSON.stringify(never)}`);
    }
  }
}

/** The dialects that send camera frames: sglang-omni's native one and vLLM-Omni's. */
type CameraDialect = Extract<DialectConfig, { protocol: 'native' | 'vllm-omni' }>['protocol'];

/** Whether the dialect named `protocol` sends camera frames (`--video`, a dataset sample's own). */
export function sendsCameraFrames(protocol: string): protocol is CameraDialect {
  return protocol === 'native' || protocol === 'vllm-omni';
}

function takesCamera(config: DialectConfig): config is Extract<DialectConfig, { protocol: CameraDialect }> {
  return sendsCameraFrames(config.protocol);
}

/**
 * One session's dialect with its own camera (a dataset sample's frames) in place of the run's; the
 * dialects that send no frames are as given.
 */
export function withSessionCamera(config: DialectConfig, video: CameraFrames | undefined): DialectConfig {
  if (!video || !takesCamera(config)) return config;
  return { ...config, video };
}

/**
 * Silence sent after a session's input, ms: under server VAD, vLLM-Omni's benchmark appends 1.5 s
 * so the server's VAD closes the last turn with no commit (VLLM_SERVER_VAD_TAIL_MS); 0 otherwise.
 */
export function trailingSilenceMs(config: DialectConfig): number {
  return config.protocol === 'vllm-omni' && config.turn_detection === 'server_vad' ? VLLM_SERVER_VAD_TAIL_MS : 0;
}
