import { OpenAIEvent } from './openai';

/** Which names a server gives its output events: GA (`response.output_audio.delta`) or beta (`response.audio.delta`). */
export type OpenAINames = 'ga' | 'beta';

const BETA: Partial<Record<string, string>> = {
  [OpenAIEvent.audioDelta]: 'response.audio.delta',
  [OpenAIEvent.audioDone]: 'response.audio.done',
  [OpenAIEvent.transcriptDelta]: 'response.audio_transcript.delta',
  [OpenAIEvent.transcriptDone]: 'response.audio_transcript.done',
  [OpenAIEvent.textDelta]: 'response.text.delta',
  [OpenAIEvent.textDone]: 'response.text.done',
};

/**
 * Server events of one OpenAI-dialect session, for mocks and test servers. Every event carries a
 * unique `event_id`, as OpenAI's do (independent clients validate it). Audio deltas splice a
 * payload encoded once.
 */
export class OpenAIServerEvents {
  private n = 0;
  private readonly audioHead: string;

  constructor(
    private readonly session_id: string,
    private readonly names: OpenAINames = 'ga',
  ) {
    this.audioHead = `{"type":"${this.name(OpenAIEvent.audioDelta)}","event_id":"`;
  }

  private name(ga: string): string {
    return this.names === 'beta' ? (BETA[ga] ?? ga) : ga;
  }

  private id(): string {
    return `${this.session_id}_e${this.n++}`;
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return JSON.stringify({ type: this.name(type), event_id: this.id(), ...fields });
  }

  sessionCreated(session: Record<string, unknown>): string {
    return this.event(OpenAIEvent.sessionCreated, { session });
  }

  /** vLLM-Omni: the answer to `session.close`. */
  sessionClosed(reason: string): string {
    return this.event('session.closed', { session_id: this.session_id, reason, event: {} });
  }

  sessionUpdated(session: Record<string, unknown>): string {
    return this.event(OpenAIEvent.sessionUpdated, { session });
  }

  speechStarted(item_id: string, audio_start_ms: number): string {
    return this.event(OpenAIEvent.speechStarted, { item_id, audio_start_ms });
  }

  speechStopped(item_id: string, audio_end_ms: number): string {
    return this.event(OpenAIEvent.speechStopped, { item_id, audio_end_ms });
  }

  committed(item_id: string, previous_item_id: string | null): string {
    return this.event(OpenAIEvent.committed, { item_id, previous_item_id });
  }

  cleared(): string {
    return this.event(OpenAIEvent.cleared, {});
  }

  /** `response.created`, then the output item and its audio content part. */
  responseStarted(response_id: string, item_id: string, metadata?: Record<string, unknown>): string[] {
    const item = { id: item_id, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    return [
      this.event(OpenAIEvent.responseCreated, {
        response: { id: response_id, object: 'realtime.response', status: 'in_progress', output: [], ...(metadata ? { metadata } : {}) },
      }),
      this.event(OpenAIEvent.outputItemAdded, { response_id, output_index: 0, item }),
      this.event(OpenAIEvent.contentPartAdded, { response_id, item_id, output_index: 0, content_index: 0, part: { type: 'audio', transcript: '' } }),
    ];
  }

  /** An audio delta around a payload encoded once; `extra` is spliced in as further fields (`"k":v,…`). */
  audioDelta(response_id: string, item_id: string, payload_b64: string, extra = ''): string {
    return (
      this.audioHead +
      this.id() +
      '","response_id":"' +
      response_id +
      '","item_id":"' +
      item_id +
      '","output_index":0,"content_index":0,"delta":"' +
      payload_b64 +
      '"' +
      (extra ? ',' + extra : '') +
      '}'
    );
  }

  transcriptDelta(response_id: string, item_id: string, delta: string, extra?: Record<string, unknown>): string {
    return this.event(OpenAIEvent.transcriptDelta, { response_id, item_id, output_index: 0, content_index: 0, delta, ...extra });
  }

  /** Audio and transcript done, the content part and item done, then `response.done`. */
  responseFinished(response_id: string, item_id: string, transcript: string, usage?: { output_tokens: number }): string[] {
    return this.responseEnd(response_id, item_id, transcript, 'completed', {
      status: 'completed',
      ...(usage ? { usage: { output_tokens: usage.output_tokens, total_tokens: usage.output_tokens } } : {}),
    });
  }

  /**
   * A response that stopped before its end: its parts and item done (the item `incomplete`), then
   * `response.done` with `status: "cancelled"` and the reason OpenAI gives: `turn_detected` (the
   * server heard the user speak over it) or `client_cancelled` (`response.cancel`).
   */
  responseCancelled(response_id: string, item_id: string, transcript: string, reason: 'turn_detected' | 'client_cancelled'): string[] {
    return this.responseEnd(response_id, item_id, transcript, 'incomplete', { status: 'cancelled', status_details: { type: 'cancelled', reason } });
  }

  /** The frames that end a response: audio, transcript, content part and item done, then `response.done` with `outcome`. */
  private responseEnd(response_id: string, item_id: string, transcript: string, item_status: 'completed' | 'incomplete', outcome: Record<string, unknown>): string[] {
    const where = { response_id, item_id, output_index: 0, content_index: 0 };
    const item = { id: item_id, object: 'realtime.item', type: 'message', role: 'assistant', status: item_status, content: [{ type: 'audio', transcript }] };
    const { status, ...rest } = outcome;
    return [
      this.event(OpenAIEvent.audioDone, where),
      this.event(OpenAIEvent.transcriptDone, { ...where, transcript }),
      this.event(OpenAIEvent.contentPartDone, { ...where, part: { type: 'audio', transcript } }),
      this.event(OpenAIEvent.outputItemDone, { response_id, output_index: 0, item }),
      this.event(OpenAIEvent.responseDone, { response: { id: response_id, object: 'realtime.response', status, ...rest, output: [item] } }),
    ];
  }

  /** The answer to `conversation.item.truncate`. */
  itemTruncated(item_id: string, content_index: number, audio_end_ms: number): string {
    return this.event('conversation.item.truncated', { item_id, content_index, audio_end_ms });
  }

  error(code: string, message: string, client_event_id?: string): string {
    return this.event(OpenAIEvent.error, { error: { type: 'invalid_request_error', code, message, event_id: client_event_id ?? null } });
  }
}
