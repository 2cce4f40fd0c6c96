import { audioDeltaInfo, type DecodedFrame } from '@duplex-bench/protocol';
import type { ResponseEvent } from '@duplex-bench/metrics';

const AUDIO = new Set(['response.output_audio.delta', 'response.audio.delta']);
const TEXT = new Set(['response.output_text.delta', 'response.text.delta', 'response.output_audio_transcript.delta', 'response.audio_transcript.delta']);

/** The response event a received frame stands for, if any (GA and beta names). */
export function responseEventOf(frame: DecodedFrame, t_s: number): ResponseEvent | null {
  const type = frame.type;
  if (AUDIO.has(type)) {
    const { response_id, bytes } = audioDeltaInfo(frame);
    return { kind: 'audio_delta', t_s, response_id, bytes };
  }
  if (TEXT.has(type)) {
    const e = frame.event();
    const tokens = (e.sglang as { num_tokens?: unknown } | undefined)?.num_tokens;
    return {
      kind: 'text_delta',
      t_s,
      response_id: String(e.response_id ?? ''),
      chars: typeof e.delta === 'string' ? e.delta.length : 0,
      tokens: typeof tokens === 'number' ? tokens : undefined,
    };
  }
  if (type === 'response.created' || type === 'response.done') {
    const response = frame.event().response as { id?: unknown } | undefined;
    const response_id = String(response?.id ?? '');
    return type === 'response.created' ? { kind: 'response_created', t_s, response_id } : { kind: 'response_done', t_s, response_id };
  }
  return null;
}
