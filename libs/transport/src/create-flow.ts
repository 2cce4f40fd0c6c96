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

/**
 * One session's dialect with its own camera (a dataset sample's frames) in place of the run's; the
 * dialects that send no frames are as given.
 */
export function withSessionCamera(config: DialectConfig, video: CameraFrames | undefined): DialectConfig {
  if (!video || (config.protocol !== 'native' && config.protocol !== 'vllm-omni')) return config;
  return { ...config, video };
}

/**
 * Silence sent after a session's input, ms: under server VAD, vLLM-Omni's benchmark appends 1.5 s
 * so the server's VAD closes the last turn with no commit (VLLM_SERVER_VAD_TAIL_MS); 0 otherwise.
 */
export function trailingSilenceMs(config: DialectConfig): number {
  return config.protocol === 'vllm-omni' && config.turn_detection === 'server_vad' ? VLLM_SERVER_VAD_TAIL_MS : 0;
}
