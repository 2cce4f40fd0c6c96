import { audioDeltaBase64, audioDeltaInfo, textDeltaInfo, type DecodedFrame } from './frame';
import { gaEventName, OpenAIEvent } from './openai';
import { responseRequestMetrics, VllmEvent, vllmResponseId } from './vllm-omni';

/** One received event, reduced to what the metrics need. Times are seconds on the monotonic clock. */
export type ResponseEvent =
  | { kind: 'response_created'; t_s: number; response_id: string }
  /** TTFT/TTFP the server measured from its own request start (vLLM-Omni `response_request_metrics`). */
  | { kind: 'server_metrics'; t_s: number; response_id: string; ttft_ms?: number; ttfp_ms?: number; measurement_origin?: Record<string, string> }
  | { kind: 'text_delta'; t_s: number; response_id: string; chars: number; tokens?: number }
  | {
      kind: 'audio_delta';
      t_s: number;
      response_id: string;
      bytes: number;
      duration_ms?: number;
      tokens?: number;
      /** The server's count of the response's audio so far, cumulative (vLLM-Omni `metadata.audio_duration_ms`). */
      server_audio_duration_ms?: number;
      /** The engine's own TPOT of the response so far (vLLM-Omni stage 0 `vllm_tpot_ms`). */
      server_tpot_ms?: number;
      /** Where the first voiced audio starts in this delta, ms (null: none is voiced); set only while the response's first audible audio is looked for. */
      voiced_at_ms?: number | null;
    }
  /** `status`: how the response ended, when the server says (`listen`: the model kept listening). */
  | { kind: 'response_done'; t_s: number; response_id: string; status?: ResponseStatus };

export type ResponseStatus = 'completed' | 'cancelled' | 'failed' | 'incomplete' | 'listen';



const STATUSES: ReadonlySet<string> = new Set<ResponseStatus>(['completed', 'cancelled', 'failed', 'incomplete']);


const TEXT: ReadonlySet<string> = new Set([OpenAIEvent.textDelta, OpenAIEvent.transcriptDelta]);

/**
 * The response events a received frame stands for (GA and beta names), passed to `add`: at most
 * one output event, and the server's own request metrics when the frame carries them.
 */
export function addResponseEvents(frame: DecodedFrame, t_s: number, add: (e: ResponseEvent) => void): void {
  const type = gaEventName(frame.type);
  let response_id: string;
  if (type === OpenAIEvent.audioDelta) {
    const info = audioDeltaInfo(frame);
    response_id = info.response_id;
    // A delta that states its own rate (vLLM-Omni) is timed by it, not by the session's assumed rate.
    const duration_ms = info.sample_rate_hz ? (info.bytes / (info.sample_rate_hz * 2)) * 1000 : undefined;
    // Built field by field: spreads of conditional literals made three more objects per delta.
    const e: ResponseEvent & { kind: 'audio_delta' } = { kind: 'audio_delta', t_s, response_id, bytes: info.bytes };
    if (duration_ms !== undefined) e.duration_ms = duration_ms;
    if (info.audio_duration_ms !== undefined) e.server_audio_duration_ms = info.audio_duration_ms;
    if (info.stage_tpot_ms !== undefined) e.server_tpot_ms = info.stage_tpot_ms;
    add(e);
  } else if (TEXT.has(type)) {
    const text = textDeltaInfo(frame);
    response_id = text.response_id;
    add({ kind: 'text_delta', t_s, response_id, chars: text.chars, tokens: text.tokens });
  } else if (type === OpenAIEvent.responseCreated || type === OpenAIEvent.responseDone) {
    const event = frame.event();
    const response = event.response as { status?: unknown } | undefined;
    response_id = vllmResponseId(event);
    // response.done carries no first-output figures; its metrics would arrive after the response closed.
    if (type === OpenAIEvent.responseDone) {
      const status = typeof response?.status === 'string' && STATUSES.has(response.status) ? (response.status as ResponseStatus) : undefined;
      add({ kind: 'response_done', t_s, response_id, ...(status ? { status } : {}) });
      return;
    }
    add({ kind: 'response_created', t_s, response_id });
  } else if (type === VllmEvent.responseListen) {
    // The model decided to keep listening; with a response id that ends the response.
    const id = frame.event().response_id;
    if (typeof id === 'string' && id) add({ kind: 'response_done', t_s, response_id: id, status: 'listen' });
    return;
  } else {
    return;
  }
  const server = responseRequestMetrics(frame);
  if (server) add({ kind: 'server_metrics', t_s, response_id, ...server });
}

/** The model audio a frame carries (an audio delta in any dialect's names): its base64 bytes and the rate it states, if any; else null. */
export function modelAudioOf(frame: DecodedFrame): { base64: Buffer; sample_rate_hz?: number } | null {
  if (gaEventName(frame.type) !== OpenAIEvent.audioDelta) return null;
  const rate = audioDeltaInfo(frame).sample_rate_hz;
  const base64 = audioDeltaBase64(frame);
  return rate === undefined ? { base64 } : { base64, sample_rate_hz: rate };
}
