import {
  clientTtfp,
  clientTtft,
  stat,
  unitLagMs,
  unitMissRate,
  unitsPerSecond,
  unitStepMs,
  type Histogram,
  type UnitCounts,
  type UnitLagMs,
  type UnitStepMs,
  type UnitsPerSecond,
  type BehaviourSummary,
  type ResponseOrigin, type ResponseRecord, type SessionResponseMetrics, type CpuFigures, type GcFigures, type LoopLagFigures, type PacingFigures, type PercentilesMs, type RssFigures, type Stat } from '@duplex-bench/metrics';
import type { DeadlineSchedulerStats } from '@duplex-bench/pacer';
import type { TraceWriterStats } from '@duplex-bench/tracer';
import type { SessionResult } from './session-result';
import type { ArrivalsSummary } from './arrivals-summary';
import type { ConversationOnceFigures } from './conversation-once';
import type { ServerMetricsSummary, StallsSummary } from '@duplex-bench/telemetry';

/** How packets went: on the realtime schedule (every dialect), or lockstep with the server's units (native). */
export type PacingMode = 'realtime' | 'lockstep';

/** Per-unit figures of a native run on the realtime schedule (sglang-omni's unit lag and miss rate). */
export interface UnitFigures extends UnitCounts {
  /** A unit is missed when its lag exceeds this: one unit. */
  miss_threshold_ms: number;
}

/** What a lockstep run measures: the server's pace with no realtime constraint. */
export interface LockstepFigures {
  unit_ms: number;
  units: Omit<UnitCounts, 'missed' | 'unit_ms'>;
  ms_per_unit: UnitStepMs;
  units_per_s: UnitsPerSecond;
  units_per_s_total: number;
  measurement_origin: Record<string, string>;
}

export interface RunSummary extends PacingFigures {
  qualified: boolean;
  /** `realtime` unless the run was lockstep: then no schedule was kept, and `qualified` is false (not a realtime capacity figure). */
  pacing?: PacingMode;
  /** Lockstep: why the pacing verdict does not apply. */
  pacing_verdict?: string;
  interrupted: boolean;
  sessions: {
    started: number;
    completed: number;
    incomplete: number;
    with_violation: number;
    incomplete_reasons: Record<string, number>;
  };
  pacing_deviation_steady_ms?: PercentilesMs;
  warmup_s: number;
  event_loop_lag_ms: LoopLagFigures;
  /**
   * What this client added to every received figure: a stamped frame's receive stamp minus the
   * server's send stamp, on the host's monotonic clock; null when the server stamped no frame
   * (only our mocks do, with --stamp-sends).
   */
  receive_delay_ms?: PercentilesMs | null;
  /**
   * Times a socket's reads waited for the next timers phase because the loop's reads of one poll
   * phase had passed their bound (50 ms) and the read filled its 64 KiB buffer (a flood of frames); absent when none did.
   */
  reads_paused?: number;
  gc_pause_ms: GcFigures;
  cpu_cores: CpuFigures;
  /** CPU seconds of this process over packets sent, in µs: the cost of one packet cycle (one append out, its answers in). */
  cpu_us_per_packet?: number | null;
  peak_rss_bytes: number;
  /** Resident memory sampled each second, and its growth after the warm-up: a long run's flat memory, shown. */
  rss?: RssFigures;
  peak_overlapping_streams: number;
  trace_backlog_peak_bytes: number;
  trace: TraceWriterStats;
  scheduler: DeadlineSchedulerStats;
  events: {
    server_errors: number;
    /** Server `error` events by code (`error.code`, else `error.type`), over every session. */
    server_error_codes?: Record<string, number>;
    unknown: Record<string, number>;
    /** vLLM-Omni's own events over every session: listen decisions, resyncs asked, expiries, playback acknowledgements. */
    dialect?: Record<string, number>;
    /** vLLM-Omni `server_event_seq`, over the sessions whose server numbered its events. */
    server_event_seq?: { sessions: number; gaps: number; missing_events: number; not_rising: number };
  };
  packet_ms: number;
  /** Each session's input, s (`--duration`); a conversation played once (`conversation_once`): the longest input a session streamed. */
  duration_s: number;
  measurement_origin: Record<string, string>;
  /** `run --conversation` without `--duration`: each session played the script once; what that came to. */
  conversation_once?: ConversationOnceFigures;
  /** Present when the server answered with model turns (response.created … response.done). */
  duplex?: DuplexAggregate;
  /** vllm-omni runs: the response figures under vLLM-Omni's benchmark names and meanings. */
  vllm_omni?: VllmOmniFigures;
  /** `--profile qwen3-omni-half-duplex` runs: what sglang-omni's legacy oracle reports of each session, pooled. */
  legacy?: LegacyFigures;
  /** `--video`: the camera frames the sessions sent, and their JPEG bytes. */
  video?: VideoFigures;
  /** `run --slo`: each term judged against this summary's figures, and whether every one held. */
  slo?: {
    terms: Array<{ term: string; value: number | null; ok: boolean }>;
    passed: boolean;
    /** `--abort-on-fail`: the term that ended the run early, its figure then, and when (s after the start gate). */
    aborted?: { term: string; value: number; at_s: number; how: string };
  };
  /** Native, realtime pacing: each unit's lag, pooled over sessions; a unit is missed past one unit. */
  unit_lag_ms?: UnitLagMs;
  unit_miss_rate?: number | null;
  units?: UnitFigures;
  /** Native, lockstep pacing. */
  lockstep?: LockstepFigures;
  /** `--conversation`: the behaviour figures (response, stop and cancel latency, takeover and yield rates). */
  behaviour?: BehaviourSummary;
  /** `--arrival-rate`: sessions that arrived and left on an open-loop schedule. */
  arrivals?: ArrivalsSummary;
  /** `--server-metrics`: the server's own latency histograms over the run, beside the client's figures. */
  server_metrics?: ServerMetricsSummary;
  /** `--sampler`: every loop stall over 50 ms with its cause and evidence. */
  stalls?: StallsSummary;
}

/** Response figures of one group of sessions. Every latency here is the client's own (receive times). */
export interface ResponseFigures {
  sessions: number;
  /** Sessions the server answered at all (a response created, or any text or audio). */
  sessions_answered: number;
  /** Finished responses (`response.done` received), and responses created but never finished. */
  responses: number;
  responses_unfinished: number;
  ttft_ms: Stat;
  ttfp_ms: Stat;
  /** The same origin to the first voiced audio as heard (ResponseRecord.audible_ttfp_ms), over the responses whose audio was voiced. */
  audible_ttfp_ms: Stat;
  rtf: Stat;
  /** TPOT the client measured from server-sent token counts; the engine's own TPOT is `server_tpot_ms`. */
  tpot_ms: Stat;
  /** The server's own figures (vLLM-Omni `response_request_metrics`, stage-0 `vllm_tpot_ms`), each over the responses that carried it; absent when none did. */
  server_ttft_ms?: Stat;
  server_ttfp_ms?: Stat;
  server_tpot_ms?: Stat;
  duplex_stream_ttft_ms: Stat;
  duplex_stream_ttfp_ms: Stat;
  duplex_stream_rtf: Stat;
  output_gap_max_ms: Stat;
  drift_max_ms: Stat;
  playback_underruns: number;
  /** The client's own hold on each session's end of input past the real client's rule, over the sessions it held; left out of the figures above. */
  input_end_held_ms: Stat;
}

/**
 * The response figures of a run: complete sessions pooled; incomplete sessions' figures apart
 * (a session cut short answers differently), counted by reason.
 */
export interface DuplexAggregate extends ResponseFigures {
  incomplete?: ResponseFigures & { reasons: Record<string, number> };
  measurement_origin: Record<string, string>;
}

/** The distinct origins a pooled figure draws on, joined. */
function originsOf(origins: string[]): string {
  return [...new Set(origins)].join(' or ');
}

export type DuplexSession = Pick<SessionResult, 'id' | 'completed' | 'reason' | 'responses' | 'response_metrics'>;

function responseFigures(sessions: DuplexSession[]): ResponseFigures {
  const answered = sessions.filter((r) => r.response_metrics);
  const responses = answered.flatMap((r) => r.responses ?? []);
  const stream = answered.map((r) => r.response_metrics as NonNullable<SessionResult['response_metrics']>);
  const serverTpot = responses.filter((r) => r.tpot_origin === 'server stage 0 vllm_tpot_ms');
  const figures: ResponseFigures = {
    sessions: sessions.length,
    sessions_answered: answered.length,
    responses: responses.length,
    responses_unfinished: stream.reduce((n, m) => n + (m.responses_unfinished ?? 0), 0),
    ttft_ms: stat(responses.map(clientTtft)),
    ttfp_ms: stat(responses.map(clientTtfp)),
    audible_ttfp_ms: stat(responses.map((r) => r.audible_ttfp_ms ?? null)),
    rtf: stat(responses.map((r) => r.rtf)),
    tpot_ms: stat(responses.filter((r) => r.tpot_origin !== 'server stage 0 vllm_tpot_ms').map((r) => r.tpot_ms)),
    duplex_stream_ttft_ms: stat(stream.map((m) => m.stream_ttft_ms)),
    duplex_stream_ttfp_ms: stat(stream.map((m) => m.stream_ttfp_ms)),
    duplex_stream_rtf: stat(stream.map((m) => m.stream_rtf)),
    output_gap_max_ms: stat(stream.map((m) => m.output_gap_max_ms)),
    drift_max_ms: stat(stream.map((m) => m.drift_max_ms)),
    playback_underruns: stream.reduce((n, m) => n + m.playback_underruns, 0),
    input_end_held_ms: stat(stream.map((m) => m.input_end_held_ms ?? null)),
  };
  const byServer = (origin: ResponseOrigin) => origin === 'server response_request_metrics';
  if (responses.some((r) => byServer(r.ttft_origin))) figures.server_ttft_ms = stat(responses.filter((r) => byServer(r.ttft_origin)).map((r) => r.ttft_ms));
  if (responses.some((r) => byServer(r.ttfp_origin))) figures.server_ttfp_ms = stat(responses.filter((r) => byServer(r.ttfp_origin)).map((r) => r.ttfp_ms));
  if (serverTpot.length > 0) figures.server_tpot_ms = stat(serverTpot.map((r) => r.tpot_ms));
  return figures;
}

/**
 * Response figures of a run: per response pooled over the complete sessions, the sessions' stream
 * windows, and the incomplete sessions' figures apart. Returns the summary's aggregate and the
 * per-session file, or null when the server answered no session.
 */
/** One session's row of `duplex_metrics.json`: its outcome, stream figures and responses. */
export type DuplexSessionRow = { session_id: string; completed: boolean; reason?: SessionResult['reason']; responses?: ResponseRecord[] } & Partial<SessionResponseMetrics>;

/** `duplex_metrics.json`: the aggregate beside every answered session's row (vLLM-Omni's file shape). */
export type DuplexMetricsFile = DuplexAggregate & { duplex_session_metrics: DuplexSessionRow[]; sources?: string[] };

export function duplexMetrics(results: DuplexSession[]): { aggregate: DuplexAggregate; file: DuplexMetricsFile } | null {
  const answered = results.filter((r) => r.response_metrics);
  if (answered.length === 0) return null;
  const complete = results.filter((r) => r.completed);
  const incomplete = results.filter((r) => !r.completed);
  const responses = complete.flatMap((r) => r.responses ?? []);
  const aggregate: DuplexAggregate = {
    ...responseFigures(complete),
    measurement_origin: {
      sessions: 'complete sessions only; incomplete sessions are in `incomplete`, apart',
      ttft_ms: 'client: response.created received to first non-empty text or transcript delta received',
      ttfp_ms: 'client: response.created received to first audio delta received',
      audible_ttfp_ms:
        "client: response.created received to the response's first voiced audio as a listener hears it: its audio played from the first delta's receipt (each delta from its receipt or the end of the one before, whichever is later), the first 10 ms window at or above -45 dBFS RMS (the conversation mode's voiced level); leading silence included; over the responses with voiced audio",
      rtf: `client: response.created received to last audio delta received, over the response audio duration (${originsOf(responses.map((r) => r.audio_duration_origin)) || 'none'})`,
      tpot_ms: 'client: elapsed over the server-sent token counts of each step (responses without counts left out)',
      duplex_stream: 'client: input stream start (send of packet 0) to first text / first audio / last audio over all emitted audio; includes concurrent realtime input',
      output_gap_max_ms: 'client: per session, longest wait between two audio deltas of one response (receive times); stats over sessions',
      drift_max_ms: 'client: per session, largest lag of received audio behind real-time playback within a response; stats over sessions',
      playback_underruns: 'client: simulated player per response (80 ms prebuffer) running dry, summed over sessions',
      input_end_held_ms:
        "client: per session, how long the probe held its end of input past the real client's rule (input played out in real time) until every session had sent its last packet; that time is left out of every figure above that spans it",
    },
  };
  if (incomplete.some((r) => r.response_metrics)) {
    const reasons: Record<string, number> = {};
    for (const r of incomplete) reasons[r.reason ?? 'unknown'] = (reasons[r.reason ?? 'unknown'] ?? 0) + 1;
    aggregate.incomplete = { ...responseFigures(incomplete), reasons };
  }
  const all = [...responses, ...incomplete.flatMap((r) => r.responses ?? [])];
  if (all.some((r) => r.ttft_origin !== 'response.created received' || r.ttfp_origin !== 'response.created received')) {
    const said = all.find((r) => r.server_measurement_origin)?.server_measurement_origin;
    aggregate.measurement_origin.server_ttft_ms = aggregate.measurement_origin.server_ttfp_ms =
      `server clock, from its own request start (response_request_metrics${said ? `: ${JSON.stringify(said)}` : ''}); over the responses that carried it; not comparable with the client figures`;
  }
  if (all.some((r) => r.tpot_origin === 'server stage 0 vllm_tpot_ms')) aggregate.measurement_origin.server_tpot_ms = 'server: stage 0 vllm_tpot_ms, as last stated in a response\'s audio deltas';
  const file: DuplexMetricsFile = {
    ...aggregate,
    duplex_session_metrics: answered.map((r) => ({ session_id: r.id, completed: r.completed, ...(r.reason ? { reason: r.reason } : {}), ...r.response_metrics, responses: r.responses })),
  };
  return { aggregate, file };
}

/** `{count, mean, p50, p99}` by nearest rank, as vLLM-Omni's `distribution_summary`, at `digits` decimals; null when empty. */
function distribution(values: Array<number | null>, digits: number): Stat | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const at = (p: number) => v[Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1))];
  const round = (x: number) => Math.round(x * 10 ** digits) / 10 ** digits;
  return { count: v.length, mean: round(v.reduce((a, b) => a + b, 0) / v.length), p50: round(at(0.5)), p99: round(at(0.99)) };
}

/** The summary's `video` block. */
export interface VideoFigures {
  source: string;
  frames_sent: number;
  frame_bytes: number;
  /** vllm-omni: image items deleted to keep the window at 8. */
  image_items_deleted?: number;
  measurement_origin: Record<string, string>;
}

/** The camera frames every session sent (counted by each session's flow), or null when none went. */
export function videoFigures(source: string, results: Array<Pick<SessionResult, 'dialect_events'>>): VideoFigures | null {
  const sum = (k: string) => results.reduce((n, r) => n + (r.dialect_events?.[k] ?? 0), 0);
  if (!results.some((r) => r.dialect_events?.frames_sent !== undefined)) return null;
  const deleted = sum('image_items_deleted');
  return {
    source,
    frames_sent: sum('frames_sent'),
    frame_bytes: sum('frame_bytes'),
    ...(results.some((r) => r.dialect_events?.image_items_deleted !== undefined) ? { image_items_deleted: deleted } : {}),
    measurement_origin: {
      frames_sent: 'client: camera frames sent over every session (native sglang.input_image.append; vllm-omni video_frames on appends or input_image items); sent and counted, not traced',
      frame_bytes: 'client: JPEG bytes of those frames (before base64)',
    },
  };
}

/** The summary's `legacy` block: sglang-omni's legacy (turn-based) sessions, under their oracle's names. */
export interface LegacyFigures {
  /** Sessions the figures pool. */
  sessions: number;
  /** The liveness probe's `session.updated` after the probe was sent, over the sessions whose probe was answered. */
  probe_ack_s: Stat | null;
  responses_created: number;
  /** Responses still open when a `speech_started` came. */
  responses_overlapped_by_speech: number;
  /** Responses created and not done when the client closed: not a fault in this protocol. */
  responses_open_at_close: number;
  measurement_origin: Record<string, string>;
}

/**
 * The figures `evaluate_legacy_trace` (benchmarks/duplex/oracle.py@3d801fa0) reports per session
 * (`probe_ack_s`, `responses_created`, `responses_overlapped_by_speech`, `responses_open_at_close`),
 * as each session's flow counted them, pooled over every session; null when no session counted any.
 */
export function legacyFigures(results: Array<Pick<SessionResult, 'dialect_events'>>): LegacyFigures | null {
  const counted = results.filter((r) => r.dialect_events?.responses_created !== undefined);
  if (counted.length === 0) return null;
  const sum = (k: string) => counted.reduce((n, r) => n + (r.dialect_events?.[k] ?? 0), 0);
  const acks = counted.map((r) => r.dialect_events?.probe_ack_ms).filter((ms): ms is number => ms !== undefined);
  return {
    sessions: counted.length,
    probe_ack_s: distribution(acks.map((ms) => ms / 1000), 6),
    responses_created: sum('responses_created'),
    responses_overlapped_by_speech: sum('responses_overlapped_by_speech'),
    responses_open_at_close: sum('responses_open_at_close'),
    measurement_origin: {
      names: "sglang-omni's legacy oracle's (evaluate_legacy_trace metrics), summed over sessions; probe_ack_s a distribution {count, mean, p50, p99} by nearest rank over the sessions whose probe was answered",
      probe_ack_s: 'client: the no-op session.update sent (the liveness probe, a fixed tail after the input) to its session.updated received',
      responses_overlapped_by_speech: 'client: responses created and not done when an input_audio_buffer.speech_started was received',
      responses_open_at_close: 'client: responses created and not done when the session closed',
    },
  };
}

/** The summary's `vllm_omni` block: our figures under vLLM-Omni's benchmark names, with their meanings. */
export interface VllmOmniFigures {
  audio_turn_count: number;
  ttft_ms: Stat | null;
  ttfp_ms: Stat | null;
  rtf: Stat | null;
  tpot_ms: Stat | null;
  duplex_stream_ttft_ms: Stat | null;
  duplex_stream_ttfp_ms: Stat | null;
  duplex_stream_rtf: Stat | null;
  /** First playback acks the ledger refused because a later commit overtook them, over every session: counted, harmless. */
  playback_ack_too_late: number;
  /** First (0 ms) playback acks refused as playback_item_not_found because the server had ended their response with nothing to play first: counted, harmless. */
  playback_ack_after_end: number;
  measurement_origin: Record<string, string>;
}

/**
 * The response figures as vLLM-Omni's duplex benchmark names them (benchmarks/duplex_session_metrics.py,
 * clients/duplex.py `summarize_session_request_metrics`), over the complete sessions' audio
 * responses: `ttft_ms`/`ttfp_ms` the server's own (`response_request_metrics`) where it sent them,
 * else the client's from `response.created` received; `rtf` and the `duplex_stream_*` window the
 * client's; `tpot_ms` the engine's stage-0 figure, zero or missing ones left out. Null when no
 * session was answered.
 */
export function vllmOmniFigures(results: Array<DuplexSession & Pick<SessionResult, 'dialect_events'>>): VllmOmniFigures | null {
  const complete = results.filter((r) => r.completed && r.response_metrics);
  if (complete.length === 0) return null;
  const audio = complete.flatMap((r) => r.responses ?? []).filter((r) => r.ttfp_ms !== null);
  const stream = complete.map((r) => r.response_metrics as NonNullable<SessionResult['response_metrics']>);
  const stage0 = audio.filter((r) => r.tpot_origin === 'server stage 0 vllm_tpot_ms' && (r.tpot_ms ?? 0) > 0);
  const serverFirst = audio.some((r) => r.ttft_origin === 'server response_request_metrics' || r.ttfp_origin === 'server response_request_metrics');
  return {
    audio_turn_count: audio.length,
    ttft_ms: distribution(audio.map((r) => r.ttft_ms), 3),
    ttfp_ms: distribution(audio.map((r) => r.ttfp_ms), 3),
    rtf: distribution(audio.map((r) => r.rtf), 6),
    tpot_ms: distribution(stage0.map((r) => r.tpot_ms), 3),
    duplex_stream_ttft_ms: distribution(stream.map((m) => m.stream_ttft_ms), 3),
    duplex_stream_ttfp_ms: distribution(stream.map((m) => m.stream_ttfp_ms), 3),
    duplex_stream_rtf: distribution(stream.map((m) => m.stream_rtf), 6),
    playback_ack_too_late: results.reduce((n, r) => n + (r.dialect_events?.playback_ack_too_late ?? 0), 0),
    playback_ack_after_end: results.reduce((n, r) => n + (r.dialect_events?.playback_ack_after_end ?? 0), 0),
    measurement_origin: {
      names: "vLLM-Omni's duplex benchmark's (duplex_metrics.json): distributions {count, mean, p50, p99} by nearest rank over the complete sessions' responses with audio (duplex_stream_*: over sessions)",
      ttft: serverFirst
        ? "server response_request_metrics (the server's own request start to first text) where the server sent them, else client: response.created received to first non-empty text delta; as vLLM-Omni's benchmark prefers the server's"
        : 'client: response.created received to first non-empty text delta (the server sent no response_request_metrics)',
      ttfp: serverFirst
        ? 'server response_request_metrics (request start to first audio) where sent, else client: response.created received to first audio delta'
        : 'client: response.created received to first audio delta',
      rtf: 'client: response.created received to last audio delta received, divided by the emitted audio duration',
      tpot: 'Stage-0 engine mean time per output token (metadata.vllm_omni.stage_metrics["0"].vllm_tpot_ms)',
      duplex_stream: 'client: input stream start (send of packet 0) to first text / first audio / last audio over all emitted audio; includes concurrent realtime input',
      playback_ack_too_late: "server error events playback_ack_too_late over every session: a response's first playback.ack refused because a later commit reached the server first; ignored, as vLLM-Omni's own runner ignores them",
      playback_ack_after_end: "server error events playback_item_not_found over every session that refused a response's first (0 ms) playback.ack, sent as its response.created arrived, because the server had already ended that response with no audio and no text (it keeps no item for it); ignored: the response had nothing to play",
    },
  };
}

/** How a run ended, as its written summary says beside `qualified` (`verdict`; run's `verdictOf` decides it). */
export type SummaryVerdict = 'qualified' | 'unqualified' | 'failed' | 'interrupted';

export interface SummaryInputs {
  results: SessionResult[];
  /** Receive delays of stamped frames; none given or none counted: the summary says the server stamped none. */
  receive_delay?: PercentilesMs;
  /** Times a socket's reads were held back for the deadlines (transport's `ReadBurst`). */
  reads_paused?: number;
  pacing: PacingFigures;
  steady?: PercentilesMs;
  warmup_s: number;
  loop: LoopLagFigures;
  gc: GcFigures;
  cpu: CpuFigures;
  peak_rss_bytes: number;
  rss?: RssFigures;
  peak_overlapping_streams: number;
  scheduler: DeadlineSchedulerStats;
  unknown: Map<string, number>;
  interrupted: boolean;
  trace: TraceWriterStats;
  packet_ms: number;
  duration_s: number;
  /** Native runs: the process's unit counts, lag histogram and each session's units per second. */
  units?: { counts: UnitCounts; lag: Histogram; units_per_s: number[] };
  pacing_mode?: PacingMode;
}

export const UNIT_ORIGIN: Record<string, string> = {
  unit_lag_ms:
    "client: receipt of a unit's sglang.unit.done minus the send completion (ws.send() returned) of the append holding the unit's last input sample (sglang-omni serving_unit_metrics.py: its unit_ready_s from the packet's completed_s); units matched to unit.done in arrival order; the empty unit of an input that ends on a unit boundary left out",
  unit_miss_rate:
    "units whose lag exceeds one unit (native_unit_ms of the grant: 80 ms nemotron, 1,000 ms minicpmo, as sglang-omni's gates call a unit missed), plus units whose unit.done never came, unsent ones included, over every unit of the sessions' input, ceil(input / unit) (sglang-omni serving_unit_metrics.py@20e09f84 expected_units)",
};

export const LOCKSTEP_ORIGIN: Record<string, string> = {
  pacing:
    "lockstep: each packet sent as soon as the previous unit's sglang.unit.done came (bounded by --unit-timeout-s), no realtime schedule; pacing deviation does not apply, so qualified is false: this run measures the server's pace, not a realtime capacity",
  ms_per_unit: UNIT_ORIGIN.unit_lag_ms,
  units_per_s: "client, per session: units done over (receipt of the last unit's sglang.unit.done minus send start of the first append), as sglang-omni's serving benchmark",
  units_per_s_total: 'sum of units_per_s over the sessions (sglang-omni total_units_per_s)',
};

/** The summary's unit blocks: `unit_lag_ms`/`unit_miss_rate`/`units` on the realtime schedule, `lockstep` in lockstep. */
export function unitSummary(mode: PacingMode, counts: UnitCounts, lag: Histogram, per_session: number[]): Pick<RunSummary, 'unit_lag_ms' | 'unit_miss_rate' | 'units' | 'lockstep'> {
  if (mode === 'lockstep') {
    // No miss count in lockstep: the client waits for each unit, so no unit can fall behind a schedule.
    const { unit_ms, expected, done, done_before_input } = counts;
    return { lockstep: { unit_ms, units: { expected, done, done_before_input }, ms_per_unit: unitStepMs(lag), ...unitsPerSecond(per_session), measurement_origin: LOCKSTEP_ORIGIN } };
  }
  return { unit_lag_ms: unitLagMs(lag), unit_miss_rate: unitMissRate(counts), units: { ...counts, miss_threshold_ms: counts.unit_ms } };
}

export const MEASUREMENT_ORIGIN: Record<string, string> = {
  pacing_deviation_ms: 'client: |send start of packet N minus (send start of packet 0 + N x packet_ms)|; send start taken before serialization and ws.send()',
  pacing_deviation_signed_ms: 'client: send start of packet N minus (send start of packet 0 + N x packet_ms)',
  pacing_deviation_steady_ms: 'as pacing_deviation_ms, packets sent at least warmup_s after the start gate',
  websocket_send_ms: 'client: duration of the ws.send() call for each append',
  append_span_ms: 'client: tick due (origin + N x packet_ms) to ws.send() returned',
  buffered_amount_peak_bytes: 'client: largest socket bufferedAmount right after an append',
  event_loop_lag_ms: 'client process: lateness of a 10 ms timer',
  reads_paused: "client process: times a socket's reads waited for the next timers phase because a read filled the 64 KiB read buffer (more was waiting: a flood) after the loop's socket reads of one poll phase had passed 50 ms; the frames they held were stamped when read, after the wait",
  receive_delay_ms: "client: each frame's receive stamp (taken when the socket read that held it is handed to the connection) minus the server's send stamp (duplex_bench_sent_ms, the host's monotonic clock), where the server stamps its frames (our mocks with --stamp-sends); null when it stamps none: then this client's own wait before it stamps a frame is not measured",
  gc_pause_ms: 'client process: perf_hooks gc entries',
  cpu_cores: 'client process: CPU seconds per wall second over the run',
  cpu_us_per_packet: 'client process: CPU seconds (user + system) over the run divided by packets sent, in µs: one packet cycle is one append sent and what the server sent back for it',
  peak_rss_bytes: 'client process: kernel maxrss',
  rss: 'client process: resident set size (process.memoryUsage.rss) sampled each second; growth_mib_per_min is the least-squares slope of the samples from warmup_s after the start gate to the end of the load (the last arrival, or the last packet due), the drain after it left out; late_growth_mib_per_min is the same slope over the second half of those samples (from late_from_s), which a rise that levels off leaves flat; in_flight_peak_at_from and in_flight_peak are the most sessions in flight in a once-a-second sample up to from_s and up to the end (memory kept for the most in flight at once is reused, not given back, so RSS follows that high-water mark up: growth the traffic made, not a leak); held_growth_mib_per_min is the slope from held_from_s, the 10 s bin after the peak last rose, while it held',
  peak_overlapping_streams: 'client: most sessions between their first and last append at one instant',
  scheduler: 'client: shared deadline timer; max_lateness_ms is timer fire minus deadline',
  trace_backlog_peak_bytes: 'client: largest amount of trace and receipt data handed to the writer thread and not yet written',
  trace: 'client writer thread: batches, bytes written, longest batch write (ms)',
};

/** The summary of one run, with DESIGN.md's field names. Pure: same inputs, same summary. */
export function buildSummary(i: SummaryInputs): RunSummary {
  const reasons: Record<string, number> = {};
  let completed = 0;
  let with_violation = 0;
  let server_errors = 0;
  const server_error_codes: Record<string, number> = {};
  let dialect: Record<string, number> | undefined;
  let stamped: NonNullable<RunSummary['events']['server_event_seq']> | undefined;
  for (const r of i.results) {
    if (r.server_event_seq) {
      stamped ??= { sessions: 0, gaps: 0, missing_events: 0, not_rising: 0 };
      stamped.sessions++;
      stamped.gaps += r.server_event_seq.gaps;
      stamped.missing_events += r.server_event_seq.missing_events;
      stamped.not_rising += r.server_event_seq.not_rising;
    }
    if (r.completed) completed++;
    else if (r.reason) reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
    if (r.violation) with_violation++;
    server_errors += r.server_errors;
    for (const [code, n] of Object.entries(r.server_error_codes ?? {})) server_error_codes[code] = (server_error_codes[code] ?? 0) + n;
    if (r.dialect_events) {
      dialect ??= {};
      // A figure in ms (legacy's probe_ack_ms) is one session's time, not a count: its own block pools it.
      for (const [k, n] of Object.entries(r.dialect_events)) if (!k.endsWith('_ms')) dialect[k] = (dialect[k] ?? 0) + n;
    }
  }
  const lockstep = i.pacing_mode === 'lockstep';
  const summary: RunSummary = {
    // An interrupted run is partial: never a qualified measurement, whatever its packets did. A
    // lockstep run kept no schedule: nothing to qualify.
    qualified: !lockstep && !i.interrupted && i.pacing.packets.late === 0 && i.pacing.packets.sent > 0,
    ...(lockstep ? { pacing: 'lockstep' as const, pacing_verdict: 'not applicable (lockstep)' } : {}),
    interrupted: i.interrupted,
    sessions: {
      started: i.results.length,
      completed,
      incomplete: i.results.length - completed,
      with_violation,
      incomplete_reasons: reasons,
    },
    ...i.pacing,
    warmup_s: i.warmup_s,
    event_loop_lag_ms: i.loop,
    receive_delay_ms: i.receive_delay && i.receive_delay.count > 0 ? i.receive_delay : null,
    ...(i.reads_paused ? { reads_paused: i.reads_paused } : {}),
    gc_pause_ms: i.gc,
    cpu_cores: i.cpu,
    cpu_us_per_packet: i.cpu.cpu_s !== undefined && i.pacing.packets.sent > 0 ? Math.round((i.cpu.cpu_s / i.pacing.packets.sent) * 1e7) / 10 : null,
    peak_rss_bytes: i.peak_rss_bytes,
    ...(i.rss ? { rss: i.rss } : {}),
    peak_overlapping_streams: i.peak_overlapping_streams,
    trace_backlog_peak_bytes: i.trace.backlog_peak_bytes,
    trace: i.trace,
    scheduler: i.scheduler,
    events: { server_errors, server_error_codes, unknown: Object.fromEntries(i.unknown), ...(dialect ? { dialect } : {}), ...(stamped ? { server_event_seq: stamped } : {}) },
    packet_ms: i.packet_ms,
    duration_s: i.duration_s,
    measurement_origin: MEASUREMENT_ORIGIN,
  };
  if (i.warmup_s > 0 && i.steady) summary.pacing_deviation_steady_ms = i.steady;
  if (lockstep) {
    // Lockstep sends are not paced, so the pacing recorder saw none: count them from the sessions.
    summary.packets = { sent: i.results.reduce((n, r) => n + r.packets_sent, 0), late: 0 };
    summary.measurement_origin = { ...MEASUREMENT_ORIGIN, pacing: LOCKSTEP_ORIGIN.pacing };
  }
  if (i.units) {
    Object.assign(summary, unitSummary(lockstep ? 'lockstep' : 'realtime', i.units.counts, i.units.lag, i.units.units_per_s));
    if (!lockstep) summary.measurement_origin = { ...summary.measurement_origin, ...UNIT_ORIGIN };
  }
  return summary;
}
