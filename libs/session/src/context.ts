import type { Observable } from 'rxjs';
import type { PacketSource, VoiceSession } from '@duplex-bench/audio';
import type { Clock, DeadlineScheduler, TimerHost } from '@duplex-bench/pacer';
import type { AdmissionPolicy, Connect, DialectConfig, SessionGrant } from '@duplex-bench/transport';
import type { BehaviourOptions, PacingRecorder, ResponseRecord, SampleStore, UnitLagRecorder } from '@duplex-bench/metrics';
import type { SessionResult } from './result';
import type { SendBarrier } from './send-barrier';

/** Everything sessions of one process share. */
export interface SessionContext {
  url: string;
  dialect: DialectConfig;
  /** Upgrade request headers (a bearer key); never traced or written. */
  headers?: Record<string, string>;
  clock: Clock;
  /** The timers of every bound and backoff on the session's connections (default: real ones reading `clock`); tests fire them by hand. */
  timers?: TimerHost;
  /** Opens each attempt's connection (default: a WebSocket, `WsConnection.open`); specs pass a fake server's. */
  connect?: Connect;
  scheduler: DeadlineScheduler;
  packets: PacketSource;
  pacing: PacingRecorder;
  samples: SampleStore;
  connect_timeout_ms: number;
  /** The largest frame taken from the server, bytes (`frame_too_large` past it; the connection's default when not given). */
  max_frame_bytes?: number;
  /** Each stamped frame's receive delay, ms (transport `on_sent_stamp`). */
  on_sent_stamp?: (delay_ms: number, received_s: number) => void;
  /** Bytes a session may queue unsent (`send_backpressure` past it; the connection's default when not given). */
  max_send_buffer_bytes?: number;
  /** Bound on the dialect's handshake (their clients': native 10 s, vllm-omni 30 s). */
  handshake_timeout_ms?: number;
  /** Bound on the end of input (`--drain-timeout-s`); not given, each dialect's own (`drainTimeoutMs`). */
  drain_timeout_ms?: number;
  /** Bound on the dialect's close (`session.closed`; vllm-omni's client: 20 s). */
  close_timeout_ms?: number;
  /** A refused admission (HTTP 503; vLLM-Omni `resource_exhausted`) is retried this often, with a doubling backoff. */
  admission?: AdmissionPolicy;
  /** Rate of the server's output audio, for durations computed from bytes, until a server grants one. */
  output_sample_rate: number;
  /** The user gave `output_sample_rate` (`--output-sample-rate`): it overrides what a server grants. */
  output_sample_rate_given?: boolean;
  /** Told of each session's grant (run.json records it; a flag that disagrees is warned about). */
  onGrant?(grant: SessionGrant): void;
  /** Emits once to stop sending on every session (SIGINT); replays to sessions that start later. */
  stop$: Observable<void>;
  /** Received event types that the dialect does not define, counted by type. */
  unknownEvents: Map<string, number>;
  onStreamStart(): void;
  onStreamEnd(): void;
  /** Told of each session's final result (live telemetry counts them as they end). */
  onSessionEnd?(result: SessionResult): void;
  /** Told of each model response as it finishes (live telemetry's latency histograms). */
  onResponse?(response: ResponseRecord): void;
  /** Told of a response's client TTFT or TTFP as soon as it arrives (`--abort-on-fail`, the live dashboard). */
  onFirstOutput?(figure: 'ttft' | 'ttfp', ms: number): void;
  /** When set, input ends are held until every session of the run has sent its last packet. */
  allSent?: SendBarrier;
  /** Native servers: each unit's lag (input complete → its `sglang.unit.done`), pooled over the process's sessions. */
  units?: UnitLagRecorder;
  /**
   * Lockstep pacing (native): each unit's input is sent once the server reported the previous unit
   * done, bounded per unit; no realtime schedule, so no pacing deviation. Absent: realtime pacing.
   */
  lockstep?: { unit_timeout_ms: number };
  /** With a conversation: the bounds its behaviour figures are read with. */
  behaviour?: BehaviourOptions;
  /** With a conversation: each session's model audio to the voice activity thread, whose spans the figures read. */
  voice?: (session_id: string) => VoiceSession;
}
