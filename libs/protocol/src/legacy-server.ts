import { LegacyEvent } from './legacy';

/** How a legacy response ends: completed with the generation's finish reason, or cancelled because the user spoke over it. */
export type LegacyResponseEnd = { status: 'completed'; reason: 'stop' | 'length' } | { status: 'cancelled'; reason: 'turn_detected' };

/**
 * Server events of one legacy (turn-based) session, for mocks and test servers, in the shapes the
 * conversation session sends them (sglang_omni/serve/realtime/session.py@0b4c9e8b, events.py):
 * every event has an `event_id` (`evt_…`), output events carry the beta names, a response's audio
 * sits at `content_index` 1 and its text at 0, both at `output_index` 0 of one assistant item.
 * Errors carry `sglang.fatal` as the facade's stand-in in test_duplex_legacy.py@7d89c7ef sends it.
 */
export class LegacyServerEvents {
  private n = 0;
  private readonly audioHead: string;

  constructor(private readonly prefix: string) {
    this.audioHead = `{"type":"${LegacyEvent.audioDelta}","event_id":"`;
  }

  private id(): string {
    return `evt_${this.prefix}_${this.n++}`;
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return JSON.stringify({ type, event_id: this.id(), ...fields });
  }

  sessionCreated(session: Record<string, unknown>): string {
    return this.event(LegacyEvent.sessionCreated, { session });
  }

  sessionUpdated(session: Record<string, unknown>): string {
    return this.event(LegacyEvent.sessionUpdated, { session });
  }

  speechStarted(item_id: string, audio_start_ms: number): string {
    return this.event(LegacyEvent.speechStarted, { audio_start_ms, item_id });
  }

  speechStopped(item_id: string, audio_end_ms: number): string {
    return this.event(LegacyEvent.speechStopped, { audio_end_ms, item_id });
  }

  /** The session commits the user's turn itself: only its item id (no `previous_item_id`). */
  committed(item_id: string): string {
    return this.event(LegacyEvent.committed, { item_id });
  }

  responseCreated(response_id: string): string {
    return this.event(LegacyEvent.responseCreated, { response: { id: response_id, object: 'realtime.response', status: 'in_progress', output: [] } });
  }

  /** One audio delta; the payload (often one shared string) is spliced in, not re-encoded. */
  audioDelta(response_id: string, item_id: string, delta_b64: string): string {
    return `${this.audioHead}${this.id()}","response_id":"${response_id}","item_id":"${item_id}","output_index":0,"content_index":1,"delta":"${delta_b64}"}`;
  }

  textDelta(response_id: string, item_id: string, delta: string): string {
    return this.event(LegacyEvent.textDelta, { response_id, item_id, output_index: 0, content_index: 0, delta });
  }

  audioDone(response_id: string, item_id: string): string {
    return this.event(LegacyEvent.audioDone, { response_id, item_id, output_index: 0, content_index: 1 });
  }

  textDone(response_id: string, item_id: string, text: string): string {
    return this.event(LegacyEvent.textDone, { response_id, item_id, output_index: 0, content_index: 0, text });
  }

  /** `response.done` with the assistant item: its text, and its audio's transcript when audio went out. */
  responseDone(response_id: string, item_id: string, end: LegacyResponseEnd, text: string, withAudio: boolean): string {
    const content: Array<Record<string, unknown>> = [{ type: 'text', text }];
    if (withAudio) content.push({ type: 'audio', transcript: text });
    return this.event(LegacyEvent.responseDone, {
      response: {
        id: response_id,
        object: 'realtime.response',
        status: end.status,
        status_details: { reason: end.reason },
        output: [{ id: item_id, object: 'realtime.item', type: 'message', role: 'assistant', content }],
        usage: null,
      },
    });
  }

  /** The client's `input_audio_buffer.clear` dropped the buffered input. */
  inputCleared(): string {
    return this.event(LegacyEvent.inputCleared, {});
  }

  /** The audio of a response the user spoke over is dropped: sent after the `speech_started` that cut it. */
  outputCleared(response_id: string, item_id: string): string {
    return this.event(LegacyEvent.outputCleared, { response_id, item_id });
  }

  transcriptionDelta(item_id: string, delta: string): string {
    return this.event(LegacyEvent.transcriptionDelta, { item_id, content_index: 0, delta });
  }

  transcriptionCompleted(item_id: string, transcript: string): string {
    return this.event(LegacyEvent.transcriptionCompleted, { item_id, content_index: 0, transcript });
  }

  error(type: string, code: string, message: string, client_event_id?: string): string {
    return this.event(LegacyEvent.error, { sglang: { fatal: false }, error: { type, code, message, event_id: client_event_id ?? null, param: null } });
  }
}
