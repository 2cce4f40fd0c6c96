// OpenAI-Realtime-style and vLLM-Omni-style servers scripted for virtual-time specs.
import type { FakeServerSide } from '@duplex-bench/transport/testing';

export interface OpenAIScript {
  rate?: number;
  /** Server ms from `response.create` (openai) or the commit (vllm-omni) to `response.created`, and on to its audio and `response.done`. */
  answer_ms?: number;
  /** vLLM-Omni: numbered events (`server_event_seq`), `session.close` answered with `session.closed`. */
  vllm?: boolean;
  /** An openai server that numbers its events (`server_event_seq`), one of vLLM-Omni's extensions. */
  numbered?: boolean;
  /** vLLM-Omni: the first `refusals` openings are refused as a full server does (`resource_exhausted`), then the socket closes. */
  refuse?: boolean;
  /** vLLM-Omni: errors after the first playback ack of each response with this code. */
  ack_error?: string;
  /** Sends this error (not fatal) right after the grant. */
  error_after_grant?: string;
}

/** Plays the server on `side`: the grant, then one response per commit (openai: per `response.create`). */
export function openaiServer(side: FakeServerSide, o: OpenAIScript = {}): void {
  const rate = o.rate ?? 24_000;
  const answer_ms = o.answer_ms ?? 50;
  let seq = 0;
  let responses = 0;
  const acked = new Set<string>();
  // Numbered as sent, in the order they go out.
  const numbered = o.vllm === true || o.numbered === true;
  const send = (e: Record<string, unknown>, delay_ms = 0) => side.later(delay_ms, () => side.send(numbered ? { ...e, server_event_seq: ++seq } : e));
  const session = { id: 'sess_1', audio: { output: { format: { type: 'audio/pcm', rate } } } };
  const respond = () => {
    const id = `resp_${responses++}`;
    send({ type: 'response.created', response: { id, status: 'in_progress' } }, answer_ms);
    send({ type: 'response.output_audio.delta', response_id: id, item_id: `item_${id}`, delta: Buffer.alloc((rate / 1000) * 2 * 100).toString('base64') }, answer_ms);
    send({ type: 'response.output_audio.done', response_id: id }, answer_ms * 2);
    send({ type: 'response.done', response: { id, status: 'completed' } }, answer_ms * 2);
  };
  if (!o.vllm) send({ type: 'session.created', session });
  side.onMessage((e) => {
    switch (e.type) {
      case 'session.update':
        if (o.refuse) {
          side.send({ type: 'error', error: { type: 'rate_limit_error', code: 'resource_exhausted', message: 'duplex_session_capacity_exhausted: limit=1' } });
          side.close(1000, 'resource_exhausted');
          return;
        }
        if (o.vllm) send({ type: 'session.created', session });
        send({ type: 'session.updated', session });
        if (o.error_after_grant) send({ type: 'error', error: { type: 'invalid_request_error', code: o.error_after_grant, message: 'refused' } });
        break;
      case 'input_audio_buffer.commit':
        send({ type: 'input_audio_buffer.committed', item_id: `item_in_${String(e.event_id)}` });
        if (o.vllm) respond();
        break;
      case 'response.create':
        respond();
        break;
      case 'playback.ack': {
        const id = String(e.response_id);
        if (o.ack_error && !acked.has(id)) {
          acked.add(id);
          send({ type: 'error', error: { type: 'invalid_request_error', code: o.ack_error, message: 'refused' } });
        } else send({ type: 'playback.acknowledged', event: { type: 'playback.acknowledged', item_id: `item_${id}`, played_ms: e.played_ms } });
        break;
      }
      case 'session.close':
        send({ type: 'session.closed', reason: 'client_closed' });
        break;
      default:
        break;
    }
  });
}
