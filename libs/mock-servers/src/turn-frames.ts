import type { Clock } from '@duplex-bench/pacer';
import {
  NativeAudioDeltaTemplate,
  nativeAudioDone,
  nativeResponseCreated,
  nativeResponseDone,
  nativeTranscriptDelta,
  nativeUnitDone,
  type OpenAIServerEvents,
} from '@duplex-bench/protocol';

/** How a turn ends: the model finished it, or the client closed the session while it was open. */
export type TurnEnd = 'stop' | 'client_closed';

/** The frames a dialect gives a model turn; the model mock decides when each goes. */
export interface TurnFrames {
  started(response_id: string): string[];
  /** An audio delta of the frames' own payload (silence), or of `payload_b64` when given. */
  audio(response_id: string, unit_id: number, chunk_seq: number, t_start_ms: number, duration_ms: number, payload_b64?: string): string;
  /** A transcript delta; `tokens` is the step's token count when the mock reports tokens. */
  transcript(response_id: string, text: string, tokens?: number): string;
  /** The dialect's per-unit done event (`duration_ms` of input the unit held), if it has one. */
  unitDone(unit_id: number, t_start_ms: number, duration_ms: number): string | null;
  finished(response_id: string, transcript: string, tokens: number | undefined, end: TurnEnd): string[];
}

const itemOf = (response_id: string) => `item_${response_id}`;

/**
 * sglang-omni duplex frames: every event has its own id (from `nextEventId`), audio deltas carry
 * the unit's `sglang` media time, and each input unit ends with `sglang.unit.done`.
 */
export class NativeTurnFrames implements TurnFrames {
  private readonly templates = new Map<string, NativeAudioDeltaTemplate>();

  constructor(
    private readonly payload_b64: string,
    private readonly nextEventId: () => string,
  ) {}

  started(response_id: string): string[] {
    this.templates.set(response_id, new NativeAudioDeltaTemplate(response_id, itemOf(response_id), this.payload_b64));
    return [nativeResponseCreated(this.nextEventId(), response_id)];
  }

  audio(response_id: string, unit_id: number, _chunk_seq: number, t_start_ms: number, duration_ms: number, payload_b64?: string): string {
    const template =
      payload_b64 !== undefined
        ? new NativeAudioDeltaTemplate(response_id, itemOf(response_id), payload_b64)
        : (this.templates.get(response_id) ?? new NativeAudioDeltaTemplate(response_id, itemOf(response_id), this.payload_b64));
    // One chunk per unit: chunk_seq counts chunks within the unit.
    return template.encode(this.nextEventId(), unit_id, 0, t_start_ms, duration_ms);
  }

  transcript(response_id: string, text: string, tokens?: number): string {
    return nativeTranscriptDelta(this.nextEventId(), response_id, itemOf(response_id), text, tokens);
  }

  unitDone(unit_id: number, t_start_ms: number, duration_ms: number): string {
    return nativeUnitDone(this.nextEventId(), unit_id, t_start_ms, duration_ms);
  }

  finished(response_id: string, _transcript: string, tokens: number | undefined, end: TurnEnd): string[] {
    this.templates.delete(response_id);
    const extra = tokens !== undefined ? { num_tokens_out: tokens } : {};
    return [nativeAudioDone(this.nextEventId(), response_id, itemOf(response_id)), nativeResponseDone(this.nextEventId(), response_id, end, extra)];
  }
}

interface OpenAITurnTimes {
  started_s: number;
  first_audio_s: number | null;
  reported: boolean;
}

/**
 * OpenAI Realtime frames. With `server_metrics`, the first transcript delta of each response
 * carries vLLM-Omni's `metadata.vllm_omni.response_request_metrics`, measured by the mock from
 * the turn's start.
 */
export class OpenAITurnFrames implements TurnFrames {
  private readonly times = new Map<string, OpenAITurnTimes>();

  constructor(
    private readonly events: OpenAIServerEvents,
    private readonly payload_b64: string,
    private readonly clock: Clock,
    private readonly server_metrics: boolean,
  ) {}

  started(response_id: string): string[] {
    if (this.server_metrics) this.times.set(response_id, { started_s: this.clock.now_s(), first_audio_s: null, reported: false });
    return this.events.responseStarted(response_id, itemOf(response_id));
  }

  audio(response_id: string, _unit_id: number, _chunk_seq: number, _t_start_ms: number, _duration_ms: number, payload_b64?: string): string {
    const t = this.times.get(response_id);
    if (t && t.first_audio_s === null) t.first_audio_s = this.clock.now_s();
    return this.events.audioDelta(response_id, itemOf(response_id), payload_b64 ?? this.payload_b64);
  }

  transcript(response_id: string, text: string): string {
    const t = this.times.get(response_id);
    if (!t || t.reported) return this.events.transcriptDelta(response_id, itemOf(response_id), text);
    t.reported = true;
    const ms = (s: number | null) => (s === null ? undefined : Math.round((s - t.started_s) * 1e6) / 1000);
    const response_request_metrics = {
      source: 'server_monotonic_request_start',
      measurement_origin: { ttft: 'mock turn start to first transcript delta', ttfp: 'mock turn start to first audio delta' },
      ttft_ms: ms(this.clock.now_s()),
      ttfp_ms: ms(t.first_audio_s),
    };
    return this.events.transcriptDelta(response_id, itemOf(response_id), text, { metadata: { vllm_omni: { response_request_metrics } } });
  }

  unitDone(): null {
    return null;
  }

  finished(response_id: string, transcript: string, tokens: number | undefined): string[] {
    this.times.delete(response_id);
    return this.events.responseFinished(response_id, itemOf(response_id), transcript, tokens !== undefined ? { output_tokens: tokens } : undefined);
  }
}
