/**
 * Duplex response metrics (DESIGN.md, "Duplex response metrics"). Per response (model turn):
 * TTFT, TTFP, RTF and token-weighted TPOT, each from a named origin; per session: the stream-window
 * figures from the start of the input stream. Pure: it sees events with their receive times
 * (`ResponseEvent`, read from the wire by protocol's `addResponseEvents`).
 */
import type { ResponseEvent, ResponseStatus } from '@duplex-bench/protocol';

export type { ResponseEvent, ResponseStatus };

/** Where a response's TTFT or TTFP runs from: the client's receipt of `response.created`, or the server's own request start (vLLM-Omni). */
export type ResponseOrigin = 'response.created received' | 'server response_request_metrics';

export interface ResponseRecord {
  response_id: string;
  /** Client receive time of `response.created`, monotonic seconds: the origin of RTF, gaps and drift, and of TTFT/TTFP unless the server sent its own. */
  origin_s: number;
  /** Origin to the first non-empty text or transcript delta; the origin is `ttft_origin`. */
  ttft_ms: number | null;
  /** Origin to the first audio delta; the origin is `ttfp_origin`. */
  ttfp_ms: number | null;
  /** Each figure's own origin: a server that sends only its TTFP leaves TTFT the client's. */
  ttft_origin: ResponseOrigin;
  ttfp_origin: ResponseOrigin;
  /** When that figure is the server's: the client's own, from `response.created` received. */
  client_ttft_ms?: number | null;
  client_ttfp_ms?: number | null;
  /** What the server says its figures run from and to. */
  server_measurement_origin?: Record<string, string>;
  rtf: number | null;
  tpot_ms: number | null;
  /** How the response ended, when the server said; absent means it did not say. */
  status?: ResponseStatus;
  /** Where `audio_duration_ms` comes from. */
  audio_duration_origin: 'server metadata.audio_duration_ms (cumulative)' | 'received bytes at the output rate';
  /** Where `tpot_ms` comes from, or why it is absent. */
  tpot_origin: 'server stage 0 vllm_tpot_ms' | 'client: elapsed over per-step token counts (server-sent counts)' | 'absent: no token counts and no server stage metrics';
  audio_duration_ms: number;
  tokens: number;
  /** The client's own hold on its end of input that fell inside this response's RTF span and was left out of it, ms. */
  client_hold_excluded_ms?: number;
  /** Longest wait between two audio deltas of this response, in ms. */
  max_output_gap_ms: number | null;
  /** Receive span of the audio minus the audio it carried before the last delta, in ms: > 0 means output fell behind real time. */
  drift_ms: number | null;
  /** Times a player that starts at the first delta (plus the prebuffer) would have run dry. */
  playback_underruns: number;
  /**
   * Response origin to when its first voiced audio is heard, ms: played from its first delta's
   * receipt on (each delta from its receipt, or from the end of the one before, whichever is later),
   * the first 10 ms at or above the conversation mode's voiced level. A response that opens with
   * silence is heard that much after its TTFP; null when none of its audio was voiced.
   */
  audible_ttfp_ms?: number | null;
}

export interface Stat {
  count: number;
  mean: number | null;
  p50: number | null;
  p99: number | null;
}

export interface SessionResponseMetrics {
  audio_turn_count: number;
  /** Responses the server created but never finished (no `response.done`) before the session ended. */
  responses_unfinished: number;
  ttft_ms: Stat;
  ttfp_ms: Stat;
  /** Over the responses whose audio was voiced at all (ResponseRecord.audible_ttfp_ms). */
  audible_ttfp_ms?: Stat;
  rtf: Stat;
  tpot_ms: Stat;
  stream_ttft_ms: number | null;
  stream_ttfp_ms: number | null;
  stream_rtf: number | null;
  stream_audio_generation_ms: number | null;
  stream_audio_duration_ms: number;
  /** How long the client held its end of input past the real client's rule; left out of the figures that span it. */
  input_end_held_ms?: number;
  output_gap_max_ms: number | null;
  drift_max_ms: number | null;
  playback_underruns: number;
  stream_measurement_origin: Record<string, string>;
}

export interface ResponseMetricsOptions {
  /** Output audio rate for durations computed from bytes (PCM16 mono). */
  output_sample_rate: number;
  /** A pause longer than this between token-bearing deltas ends a generation segment (TPOT excludes it). */
  segment_gap_ms?: number;
  /** Audio a simulated player buffers before it starts playing a response (default 80 ms). */
  playback_prebuffer_ms?: number;
  /** Told of each response as it finishes. */
  onDone?(record: ResponseRecord): void;
  /** Told of a response's client TTFT or TTFP (ms, from `response.created` received) as soon as it is known. */
  onFirst?(figure: 'ttft' | 'ttfp', ms: number): void;
}

interface Open {
  record: ResponseRecord;
  server: { ttft_ms?: number; ttfp_ms?: number; measurement_origin?: Record<string, string> } | null;
  firstAudio_s: number | null;
  /** Until when the simulated player has audio to play. */
  playableUntil_s: number;
  lastAudio_s: number | null;
  segmentStart_s: number | null;
  segmentLast_s: number | null;
  segmentTokens: number;
  tpotElapsed_ms: number;
  tpotTokens: number;
  /** The largest cumulative audio duration the server stated, ms. */
  serverAudio_ms: number;
  serverTpot_ms: number | null;
  /** Until when the audio received so far plays, for the first audible audio (null: none yet). */
  heardUntil_s: number | null;
  /** Its first voiced audio was found: no later delta is decoded for it. */
  heard: boolean;
}

/** How much of a response's audio is looked at for its first voice, ms. */
export const AUDIBLE_LOOK_MS = 10_000;

/** Nearest-rank percentile of unsorted values. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A response's TTFT / TTFP on the client's clock, whichever origin its own figure has. */
export const clientTtft = (r: ResponseRecord): number | null => (r.ttft_origin === 'response.created received' ? r.ttft_ms : (r.client_ttft_ms ?? null));
export const clientTtfp = (r: ResponseRecord): number | null => (r.ttfp_origin === 'response.created received' ? r.ttfp_ms : (r.client_ttfp_ms ?? null));

export function stat(values: Array<number | null>): Stat {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x));
  const round = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);
  return {
    count: v.length,
    mean: round(v.length > 0 ? v.reduce((a, b) => a + b, 0) / v.length : null),
    p50: round(percentile(v, 50)),
    p99: round(percentile(v, 99)),
  };
}

/** Tracks one session's responses as events arrive. */
export class ResponseTracker {
  private readonly open = new Map<string, Open>();
  readonly done: ResponseRecord[] = [];
  private firstText_s: number | null = null;
  private firstAudio_s: number | null = null;
  private lastAudio_s: number | null = null;
  private audio_ms = 0;
  /** A wait the client imposed on its end of input past the real client's rule, when it did (see `excludeInputEndHold`). */
  private hold: { from_s: number; to_s: number } | null = null;

  constructor(
    private readonly options: ResponseMetricsOptions,
    /** Start of the input stream: send start of packet 0. */
    private readonly stream_start_s: number,
  ) {}

  /**
   * The client held its end of input from `from_s` (when the real client would have sent it) to
   * `to_s` (when it did). The server's answer to the end of input waits on it, so every figure that
   * ends after `to_s` and starts before `from_s` leaves the held time out: it is the client's wait,
   * not the server's.
   */
  excludeInputEndHold(from_s: number, to_s: number): void {
    if (to_s > from_s) this.hold = { from_s, to_s };
  }

  /** The held time inside a span from `a_s` to `b_s` that ends after the hold, ms; 0 otherwise. */
  private heldMs(a_s: number, b_s: number): number {
    if (!this.hold || b_s < this.hold.to_s) return 0;
    return Math.max(0, this.hold.to_s - Math.max(a_s, this.hold.from_s)) * 1000;
  }

  /** `a_s` to `b_s` in ms, less any client hold inside it. */
  private spanMs(a_s: number, b_s: number): number {
    return (b_s - a_s) * 1000 - this.heldMs(a_s, b_s);
  }

  /** The server answered at all: a response created, or any text or audio received. */
  get answered(): boolean {
    return this.done.length > 0 || this.open.size > 0 || this.firstAudio_s !== null || this.firstText_s !== null;
  }

  add(e: ResponseEvent): void {
    switch (e.kind) {
      case 'response_created': {
        this.open.set(e.response_id, {
          server: null,
          record: {
            response_id: e.response_id,
            origin_s: e.t_s,
            ttft_origin: 'response.created received',
            ttfp_origin: 'response.created received',
            ttft_ms: null,
            ttfp_ms: null,
            rtf: null,
            tpot_ms: null,
            audio_duration_origin: 'received bytes at the output rate',
            tpot_origin: 'absent: no token counts and no server stage metrics',
            audio_duration_ms: 0,
            tokens: 0,
            max_output_gap_ms: null,
            drift_ms: null,
            playback_underruns: 0,
            audible_ttfp_ms: null,
          },
          firstAudio_s: null,
          playableUntil_s: 0,
          lastAudio_s: null,
          segmentStart_s: null,
          segmentLast_s: null,
          segmentTokens: 0,
          tpotElapsed_ms: 0,
          tpotTokens: 0,
          serverAudio_ms: 0,
          serverTpot_ms: null,
          heardUntil_s: null,
          heard: false,
        });
        break;
      }
      case 'server_metrics': {
        const r = this.open.get(e.response_id);
        if (!r) break;
        r.server = {
          ttft_ms: e.ttft_ms ?? r.server?.ttft_ms,
          ttfp_ms: e.ttfp_ms ?? r.server?.ttfp_ms,
          measurement_origin: e.measurement_origin ?? r.server?.measurement_origin,
        };
        break;
      }
      case 'text_delta': {
        const r = this.open.get(e.response_id);
        if (e.chars > 0) {
          this.firstText_s ??= e.t_s;
          if (r && r.record.ttft_ms === null) {
            r.record.ttft_ms = this.spanMs(r.record.origin_s, e.t_s);
            this.options.onFirst?.('ttft', r.record.ttft_ms);
          }
        }
        if (r && e.tokens) this.step(r, e.t_s, e.tokens);
        break;
      }
      case 'audio_delta': {
        const duration_ms = e.duration_ms ?? (e.bytes / (this.options.output_sample_rate * 2)) * 1000;
        this.firstAudio_s ??= e.t_s;
        this.lastAudio_s = e.t_s;
        this.audio_ms += duration_ms;
        const r = this.open.get(e.response_id);
        if (!r) break;
        if (r.record.ttfp_ms === null) {
          r.record.ttfp_ms = this.spanMs(r.record.origin_s, e.t_s);
          this.options.onFirst?.('ttfp', r.record.ttfp_ms);
        }
        if (!r.heard) this.hear(r, e.t_s, duration_ms, e.voiced_at_ms);
        this.play(r, e.t_s, duration_ms);
        r.lastAudio_s = e.t_s;
        r.record.audio_duration_ms += duration_ms;
        if (e.server_audio_duration_ms !== undefined && e.server_audio_duration_ms > r.serverAudio_ms) r.serverAudio_ms = e.server_audio_duration_ms;
        if (e.server_tpot_ms !== undefined) r.serverTpot_ms = e.server_tpot_ms;
        if (e.tokens) this.step(r, e.t_s, e.tokens);
        break;
      }
      case 'response_done': {
        const r = this.open.get(e.response_id);
        if (!r) break;
        this.open.delete(e.response_id);
        const rec = r.record;
        if (e.status) rec.status = e.status;
        // The server's cumulative count is what the response holds; bytes at an assumed rate are the fallback.
        if (r.serverAudio_ms > 0) {
          rec.audio_duration_ms = r.serverAudio_ms;
          rec.audio_duration_origin = 'server metadata.audio_duration_ms (cumulative)';
        }
        if (r.lastAudio_s !== null && rec.audio_duration_ms > 0) {
          rec.rtf = this.spanMs(rec.origin_s, r.lastAudio_s) / rec.audio_duration_ms;
          const held = this.heldMs(rec.origin_s, r.lastAudio_s);
          if (held > 0) rec.client_hold_excluded_ms = Math.round(held * 1000) / 1000;
        }
        if (r.serverTpot_ms !== null) {
          rec.tpot_ms = r.serverTpot_ms;
          rec.tpot_origin = 'server stage 0 vllm_tpot_ms';
        } else if (r.tpotTokens > 0) {
          rec.tpot_ms = r.tpotElapsed_ms / r.tpotTokens;
          rec.tpot_origin = 'client: elapsed over per-step token counts (server-sent counts)';
        }
        if (r.server) {
          // The server's own request start is an origin the client cannot see. Each figure the
          // server sent takes its place, named; the client's own stays beside it.
          if (r.server.ttft_ms !== undefined) {
            rec.client_ttft_ms = rec.ttft_ms;
            rec.ttft_ms = r.server.ttft_ms;
            rec.ttft_origin = 'server response_request_metrics';
          }
          if (r.server.ttfp_ms !== undefined) {
            rec.client_ttfp_ms = rec.ttfp_ms;
            rec.ttfp_ms = r.server.ttfp_ms;
            rec.ttfp_origin = 'server response_request_metrics';
          }
          if (r.server.measurement_origin) rec.server_measurement_origin = r.server.measurement_origin;
        }
        this.done.push(rec);
        this.options.onDone?.(rec);
        break;
      }
      default: {
        const never: never = e;
        throw new Error(`unknown response event ${JSON.stringify(never)}`);
      }
    }
  }

  /** Whether response `id` is open and none of its audio was voiced yet: its next delta should say where its voice starts. */
  wantsVoice(id: string): boolean {
    const r = this.open.get(id);
    return r !== undefined && !r.heard;
  }

  /**
   * One delta of a response not yet heard: played from its receipt or the end of the audio before
   * it; its voice, if any, is the response's first audible audio. A response silent for its first
   * AUDIBLE_LOOK_MS is looked at no further (no figure): a server that streams silence between
   * answers is not decoded for the whole session.
   */
  private hear(r: Open, t_s: number, duration_ms: number, voiced_at_ms: number | null | undefined): void {
    const start_s = r.heardUntil_s === null || t_s > r.heardUntil_s ? t_s : r.heardUntil_s;
    if (typeof voiced_at_ms === 'number') {
      r.heard = true;
      r.record.audible_ttfp_ms = this.spanMs(r.record.origin_s, start_s + voiced_at_ms / 1000);
    } else if (r.record.audio_duration_ms + duration_ms >= AUDIBLE_LOOK_MS) r.heard = true;
    r.heardUntil_s = start_s + duration_ms / 1000;
  }

  /** Output gap, drift and a simulated player for one audio delta of `duration_ms` received at `t_s`. */
  private play(r: Open, t_s: number, duration_ms: number): void {
    const rec = r.record;
    if (r.firstAudio_s === null) {
      r.firstAudio_s = t_s;
      r.playableUntil_s = t_s + (this.options.playback_prebuffer_ms ?? 80) / 1000;
    } else {
      const gap_ms = (t_s - (r.lastAudio_s as number)) * 1000;
      if (rec.max_output_gap_ms === null || gap_ms > rec.max_output_gap_ms) rec.max_output_gap_ms = gap_ms;
      const drift_ms = (t_s - r.firstAudio_s) * 1000 - rec.audio_duration_ms;
      if (rec.drift_ms === null || drift_ms > rec.drift_ms) rec.drift_ms = drift_ms;
      if (t_s > r.playableUntil_s) {
        rec.playback_underruns++;
        r.playableUntil_s = t_s; // playback resumes when the late audio arrives
      }
    }
    r.playableUntil_s += duration_ms / 1000;
  }

  /**
   * A step that produced `tokens` tokens at `t_s`. Within a segment, TPOT is the elapsed time from
   * the segment's first step over the tokens of the steps after it: a step of three tokens 30 ms
   * after the first counts 10 ms per token, not 30. A pause over `segment_gap_ms` starts a new segment.
   */
  private step(r: Open, t_s: number, tokens: number): void {
    r.record.tokens += tokens;
    const gap_s = (this.options.segment_gap_ms ?? 500) / 1000;
    if (r.segmentLast_s === null || t_s - r.segmentLast_s > gap_s) {
      r.segmentStart_s = t_s;
      r.segmentLast_s = t_s;
      return;
    }
    r.tpotElapsed_ms += (t_s - r.segmentLast_s) * 1000;
    r.tpotTokens += tokens;
    r.segmentLast_s = t_s;
  }

  metrics(): SessionResponseMetrics {
    const ms = (t: number | null) => (t === null ? null : Math.round(this.spanMs(this.stream_start_s, t) * 1000) / 1000);
    const generation_ms = ms(this.lastAudio_s);
    return {
      audio_turn_count: this.done.filter((r) => r.audio_duration_ms > 0).length,
      responses_unfinished: this.open.size,
      // The client's figures only: the server's own are another clock and stay on each response.
      ttft_ms: stat(this.done.map(clientTtft)),
      ttfp_ms: stat(this.done.map(clientTtfp)),
      audible_ttfp_ms: stat(this.done.map((r) => r.audible_ttfp_ms ?? null)),
      rtf: stat(this.done.map((r) => r.rtf)),
      tpot_ms: stat(this.done.map((r) => r.tpot_ms)),
      stream_ttft_ms: ms(this.firstText_s),
      stream_ttfp_ms: ms(this.firstAudio_s),
      stream_rtf: generation_ms !== null && this.audio_ms > 0 ? Math.round((generation_ms / this.audio_ms) * 1e6) / 1e6 : null,
      stream_audio_generation_ms: generation_ms,
      stream_audio_duration_ms: Math.round(this.audio_ms * 1000) / 1000,
      ...(this.hold ? { input_end_held_ms: Math.round((this.hold.to_s - this.hold.from_s) * 1e6) / 1000 } : {}),
      output_gap_max_ms: this.maxOf((r) => r.max_output_gap_ms),
      drift_max_ms: this.maxOf((r) => r.drift_ms),
      playback_underruns: this.done.reduce((n, r) => n + r.playback_underruns, 0),
      stream_measurement_origin: {
        ttft: 'input stream start to first non-empty text delta',
        ttfp: 'input stream start to first audio packet',
        audible_ttfp: "per response: response.created received to its first voiced audio as played (from its first delta's receipt, each delta after the one before), 10 ms windows at or above -45 dBFS",
        rtf: 'input stream start-to-last-audio receive time divided by total emitted audio duration (every audio delta received, its response finished or not); includes concurrent realtime input',
        input_end_held_ms:
          'client: how long this client held its end of input past the real client\'s rule (input played out) so every session\'s last packet went first; left out of every figure spanning it (ttft, ttfp, rtf, stream figures)',
        output_gap_max_ms: 'longest wait between two audio deltas of one response, client receive times',
        drift_max_ms: 'per response: receive span of its audio minus the audio received before the last delta; the largest',
        playback_underruns: 'a player starting each response at its first delta plus the prebuffer, running dry',
      },
    };
  }

  private maxOf(pick: (r: ResponseRecord) => number | null): number | null {
    const v = this.done.map(pick).filter((x): x is number => x !== null);
    return v.length > 0 ? Math.round(Math.max(...v) * 1000) / 1000 : null;
  }
}
