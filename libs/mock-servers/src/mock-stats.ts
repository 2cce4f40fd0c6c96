import type { TimerHost } from '@duplex-bench/pacer';
import { CpuMeter, createUsHistogram, LoopLagMonitor, percentilesMs, recordMs, type CpuFigures, type LoopLagFigures, type PercentilesMs } from '@duplex-bench/metrics';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog, type BehaviourSessionLog } from './behaviour-log';
import type { BehaviourReportSettings } from './behaviour-settings';

/** Behaviour mode: what each session's model did, with the settings it did it by. */
export interface BehaviourReport {
  measurement_origin: Record<string, string>;
  settings: BehaviourReportSettings;
  /** The first sessions' logs, in order of opening (open ones included, as they stand). */
  sessions: BehaviourSessionLog[];
  /** Sessions past the bound, counted and not kept. */
  sessions_not_kept: number;
}

/** Sessions whose behaviour logs are kept; later ones are counted. */
export const BEHAVIOUR_SESSIONS_KEPT = 1024;

/** One admission decision: a session let in, or refused because the server was full. */
export interface AdmissionEntry {
  /** The mock's monotonic clock, seconds. */
  t_s: number;
  outcome: 'accepted' | 'refused';
  /** Sessions holding a slot just before the decision. */
  held: number;
}

/** Admission entries kept in the log; later ones are counted. */
export const ADMISSIONS_KEPT = 100_000;

/**
 * Every admission decision: native and openai at the upgrade (a refusal is HTTP 503), the vllm-omni
 * flavour at the opening `session.update` (a refusal is `resource_exhausted`).
 */
export interface AdmissionLog {
  accepted: number;
  refused: number;
  log: AdmissionEntry[];
  not_kept: number;
}

export interface MockStats {
  measurement_origin: Record<string, string>;
  admissions: AdmissionLog;
  /**
   * `with_bearer`: upgrades that carried an `Authorization: Bearer` header. vllm-omni flavour:
   * `held_after_disconnect`, slots held now by sessions that ended without `session.close`;
   * `refused_full`, sessions refused with `resource_exhausted`; `blocked_turns`, turns that waited
   * for a playback acknowledgement; `protocol_violations`, what clients of a turn-based model did
   * that their benchmark does not (`--turn-based`), counted by kind over ended sessions.
   */
  sessions: { opened: number; completed: number; refused_503: number; active: number; with_bearer: number; held_after_disconnect?: number; refused_full?: number; blocked_turns?: number; protocol_violations?: Record<string, number> };
  appends: number;
  frames_sent: number;
  /** Socket errors of sessions (a peer that reset the connection, a bad frame): each also ends its session. */
  socket_errors: number;
  /** Per packet, as the mock saw it: (arrival − media start) − the session's smallest (arrival − media start). */
  arrival_deviation_ms: PercentilesMs;
  arrivals_late: number;
  event_loop_lag_ms: LoopLagFigures;
  cpu_cores: CpuFigures;
  /** Mock CPU seconds since start over appends received, in µs (idle time included: a load figure only for a mock started for one run). */
  cpu_us_per_append: number | null;
  /** Behaviour mode only (a behaviour knob given): the truth the probe's conversation figures are checked against. */
  behaviour?: BehaviourReport;
  /** Camera frames of ended sessions, when any came: taken, refused, and the bytes taken. */
  frames?: { accepted: number; refused: number; bytes: number };
}

/** A mock's running counts: sessions, admissions, frames. */
export interface MockCounts {
  opened: number;
  active: number;
  completed: number;
  accepted: number;
  refused: number;
  frames_sent: number;
  socket_errors: number;
}

export interface MockStatsOptions {
  clock: TimerHost;
  /** An arrival later than this (one input unit) counts as late, ms. */
  unit_ms: number;
  /** How this dialect's arrival deviation is measured, for `measurement_origin`. */
  arrival_origin: string;
  /** The vllm-omni flavour: its slots and turns are part of the session figures. */
  vllm: boolean;
  /** Behaviour mode: its settings, for the report. */
  behaviour?: BehaviourReportSettings;
}

/**
 * Everything the mock counts, in one place: the host and the dialects report events here (a
 * session opened, a frame sent, a slot refused), and `stats()` reads them out. Sessions that ended
 * are in the arrival histogram for good; open ones are added to a copy when stats are read.
 */
export class MockStatsRecorder {
  private opened_n = 0;
  private completed_n = 0;
  private refused_503_n = 0;
  private active_n = 0;
  private with_bearer_n = 0;
  private appends_ended = 0;
  private frames_sent_n = 0;
  private socket_errors_n = 0;
  private readonly vllm = { held_after_disconnect: 0, refused_full: 0, blocked_turns: 0, protocol_violations: {} as Record<string, number> };
  private readonly arrival = createUsHistogram();
  private arrivals_late_ended = 0;
  private readonly open_arrivals = new Set<ArrivalOffsets>();
  private readonly loop: LoopLagMonitor;
  private readonly cpu: CpuMeter;
  private readonly behaviourLogs: BehaviourLog[] = [];
  private behaviour_sessions_not_kept = 0;
  private readonly admissionLog: AdmissionLog = { accepted: 0, refused: 0, log: [], not_kept: 0 };
  private readonly frameCounts = { accepted: 0, refused: 0, bytes: 0 };

  constructor(private readonly options: MockStatsOptions) {
    this.loop = new LoopLagMonitor(10, options.clock).start();
    this.cpu = new CpuMeter(options.clock);
  }

  /** Sessions open now. */
  get active(): number {
    return this.active_n;
  }

  sessionOpened(): void {
    this.opened_n++;
    this.active_n++;
  }

  sessionClosed(): void {
    this.active_n--;
  }

  /** An admission decision, with the slots held just before it. */
  admission(outcome: AdmissionEntry['outcome'], held: number): void {
    const a = this.admissionLog;
    a[outcome]++;
    if (a.log.length < ADMISSIONS_KEPT) a.log.push({ t_s: this.options.clock.now_s(), outcome, held });
    else a.not_kept++;
  }

  /** A session ended as the dialect calls complete (native: `session.closed` sent; openai: close 1000). */
  sessionCompleted(): void {
    this.completed_n++;
  }

  /** An upgrade refused with HTTP 503: the server was full. */
  refused503(): void {
    this.refused_503_n++;
  }

  /** An upgrade that carried an `Authorization: Bearer` header. */
  withBearer(): void {
    this.with_bearer_n++;
  }

  frameSent(): void {
    this.frames_sent_n++;
  }

  /** A session's socket error: counted, and the session ends with its close (ws closes the socket after an error). */
  socketError(): void {
    this.socket_errors_n++;
  }

  /** vllm-omni flavour: a session refused with `resource_exhausted`. */
  refusedFull(): void {
    this.vllm.refused_full++;
  }

  /** vllm-omni flavour: a slot held after a disconnect (+1), or freed at the end of its grace (−1). */
  heldAfterDisconnect(change: 1 | -1): void {
    this.vllm.held_after_disconnect += change;
  }

  /** vllm-omni flavour: turns of a session that ended which waited for a playback acknowledgement. */
  blockedTurns(n: number): void {
    this.vllm.blocked_turns += n;
  }

  /** An ended session's camera frames. */
  frames(counts: { accepted: number; refused: number; bytes: number }): void {
    this.frameCounts.accepted += counts.accepted;
    this.frameCounts.refused += counts.refused;
    this.frameCounts.bytes += counts.bytes;
  }

  /** vllm-omni flavour: what an ended session's client did that a turn-based model's benchmark does not, by kind. */
  protocolViolations(counts: Record<string, number>): void {
    for (const [kind, n] of Object.entries(counts)) this.vllm.protocol_violations[kind] = (this.vllm.protocol_violations[kind] ?? 0) + n;
  }

  /** Behaviour mode: a session's log, kept (up to BEHAVIOUR_SESSIONS_KEPT sessions) for the stats. */
  behaviourLog(session: string): BehaviourLog {
    const log = new BehaviourLog(session);
    if (this.behaviourLogs.length < BEHAVIOUR_SESSIONS_KEPT) this.behaviourLogs.push(log);
    else this.behaviour_sessions_not_kept++;
    return log;
  }

  /** A session's arrival offsets, counted in the stats until `arrivalsDone`. */
  arrivals(): ArrivalOffsets {
    const a = new ArrivalOffsets();
    this.open_arrivals.add(a);
    return a;
  }

  /** The session ended: its arrivals go into the figures for good. */
  arrivalsDone(a: ArrivalOffsets): void {
    if (!this.open_arrivals.delete(a)) return;
    this.appends_ended += a.count;
    a.forEachDeviation((d) => {
      recordMs(this.arrival, d);
      if (d > this.options.unit_ms) this.arrivals_late_ended++;
    });
  }

  /** The running counts, cheap enough to read at every scrape (`stats()` builds the whole report). */
  counts(): MockCounts {
    return {
      opened: this.opened_n,
      active: this.active_n,
      completed: this.completed_n,
      accepted: this.admissionLog.accepted,
      refused: this.admissionLog.refused,
      frames_sent: this.frames_sent_n,
      socket_errors: this.socket_errors_n,
    };
  }

  stats(): MockStats {
    const unit_ms = this.options.unit_ms;
    // Sessions still open count with what they sent so far, against their earliest offset so far.
    const all = createUsHistogram();
    all.add(this.arrival);
    let late = this.arrivals_late_ended;
    let appends = this.appends_ended;
    for (const a of this.open_arrivals) {
      appends += a.count;
      a.forEachDeviation((d) => {
        recordMs(all, d);
        if (d > unit_ms) late++;
      });
    }
    const cpu_cores = this.cpu.figures();
    return {
      measurement_origin: {
        arrival_deviation_ms: this.options.arrival_origin,
        event_loop_lag_ms: 'mock process: lateness of a 10 ms timer',
        cpu_cores: 'mock process CPU seconds per wall second since start',
        cpu_us_per_append: 'mock process CPU seconds since start divided by appends received, in µs',
        admissions: 'mock: each admission decision on its monotonic clock; native and openai at the WebSocket upgrade (refused: HTTP 503), vllm-omni at the opening session.update (refused: resource_exhausted); held: slots held just before it',
      },
      admissions: { ...this.admissionLog, log: [...this.admissionLog.log] },
      sessions: {
        opened: this.opened_n,
        completed: this.completed_n,
        refused_503: this.refused_503_n,
        active: this.active_n,
        with_bearer: this.with_bearer_n,
        ...(this.options.vllm ? { ...this.vllm, protocol_violations: { ...this.vllm.protocol_violations } } : {}),
      },
      appends,
      frames_sent: this.frames_sent_n,
      socket_errors: this.socket_errors_n,
      arrival_deviation_ms: percentilesMs(all),
      arrivals_late: late,
      event_loop_lag_ms: this.loop.figures(),
      cpu_cores,
      cpu_us_per_append: cpu_cores.cpu_s !== undefined && appends > 0 ? Math.round((cpu_cores.cpu_s / appends) * 1e7) / 10 : null,
      ...(this.options.behaviour ? { behaviour: this.behaviourReport(this.options.behaviour) } : {}),
      ...(this.frameCounts.accepted + this.frameCounts.refused > 0 ? { frames: { ...this.frameCounts } } : {}),
    };
  }

  private behaviourReport(settings: BehaviourReportSettings): BehaviourReport {
    return {
      measurement_origin: {
        t_ms: "mock monotonic clock (the host's CLOCK_MONOTONIC), ms; user speech: its append's arrival plus the sample's offset in it; answers: when the sample plays at a client that plays on receipt (a unit plays from when it went out or when the unit before it has played, whichever is later)",
        input_ms: "position in the session's received input audio, ms",
        speech: `energy VAD on the decoded input: ${settings.vad.frame_ms} ms frames, voiced at RMS >= ${settings.vad.threshold_dbfs} dBFS, onset after ${settings.vad.onset_frames} voiced frames (at the first), end after ${settings.vad.hangover_ms} ms of silence (at the end of the last voiced frame)`,
        answer_start: 'the first voiced sample of the answer audio went out',
        answer_end: 'the last voiced sample of the answer audio went out; silent_ms: its audio ended',
        step: "index in the conversation script's steps, from 0",
      },
      settings,
      sessions: this.behaviourLogs.map((log) => log.toJSON()),
      sessions_not_kept: this.behaviour_sessions_not_kept,
    };
  }

  /** Stops the loop-lag monitor. */
  stop(): void {
    this.loop.stop();
  }
}
