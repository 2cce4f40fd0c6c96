import type { PacketSource } from '@duplex-bench/audio';
import type { Clock } from '@duplex-bench/pacer';
import { arrivalsSummary, type ArrivalsSummary } from '@duplex-bench/results';
import { ArrivalRun } from '../arrivals/arrival-run';
import { arrivalSchedule } from '../arrivals/arrival-schedule';
import { describeDuration, meanDurationS } from '../arrivals/session-duration';
import { EndedSessions } from '../ended-sessions';
import type { ConversationInput } from '../conversation-input';
import type { ProcessMeasures } from '../process-measures';
import { RealtimeSession, type SessionContext, type SessionResult } from '@duplex-bench/session';
import type { TraceWriter } from '@duplex-bench/tracer';
import type { Observable } from 'rxjs';
import type { ArrivalOptions } from './run-settings';

export interface ArrivalSessionsInput {
  arrivals: ArrivalOptions;
  origin_s: number;
  warmup_s: number;
  measures: ProcessMeasures;
  ctx: SessionContext;
  writer: TraceWriter;
  clock: Clock;
  stop$: Observable<void>;
  packetsFor(duration_s: number): PacketSource;
  conversation: ConversationInput | null;
  packet_ms: number;
}

/**
 * `run --arrival-rate`: the schedule fixed from the seed, each arrival a session of its own
 * duration, run open loop on the process's deadline scheduler; its results and the `arrivals` block.
 * Each session's rows go to sessions.jsonl and duplex_metrics.json as it ends (`ended`); the results
 * kept are what the summary's figures read of them.
 */
export async function runArrivals(i: ArrivalSessionsInput): Promise<{ results: SessionResult[]; ended: EndedSessions; summary: ArrivalsSummary; scheduled: number }> {
  const a = i.arrivals;
  const schedule = arrivalSchedule({ rate_per_s: a.rate_per_s, process: a.process, run_for_s: a.run_for_s, seed: a.seed, duration: a.duration });
  const width = String(Math.max(0, schedule.length - 1)).length;
  const { timeline, scheduler } = i.measures;
  const ended = new EndedSessions((file, text) => i.writer.append(file, text));
  const run = new ArrivalRun({
    schedule,
    origin_s: i.origin_s,
    max_in_flight: a.max_in_flight,
    steady_from_s: i.origin_s + i.warmup_s,
    scheduler,
    clock: i.clock,
    stop$: i.stop$,
    make: (arrival) => {
      const id = `a${String(arrival.index).padStart(width, '0')}`;
      // With a conversation, the script from its first step: once, to its own end, or for this session's duration (again from the start if it ends sooner).
      const packets = i.conversation ? i.conversation.player(() => i.clock.now_s(), arrival.duration_s, { once: a.duration.kind === 'conversation' }) : i.packetsFor(arrival.duration_s);
      return new RealtimeSession(id, i.ctx, i.writer.openSession(id), packets);
    },
    onInFlight: (t_s, n) => timeline.activeSessions(t_s, n),
    onEnded: (r) => ended.add(r),
  });
  timeline.watchActive(() => run.inFlight);
  i.measures.rss.watchLoad(() => run.inFlight);
  await run.run();
  const results = ended.results();
  const stated_s = meanDurationS(a.duration);
  // A conversation's own length is known once its sessions ran: the mean input of those that streamed it to the end.
  const whole = stated_s === null ? results.filter((r) => r.completed) : [];
  const measured_s = whole.length > 0 ? (whole.reduce((sum, r) => sum + r.packets_sent, 0) * i.packet_ms) / 1000 / whole.length : 0;
  const summary = arrivalsSummary({
    process: a.process,
    rate_per_s: a.rate_per_s,
    run_for_s: a.run_for_s,
    seed: a.seed,
    session_duration: describeDuration(a.duration),
    mean_session_s: stated_s ?? Math.round(measured_s * 1000) / 1000,
    ...(stated_s === null ? { mean_session_origin: `the mean input streamed by the ${whole.length} sessions that played the script to its end (packets sent x packet_ms)` } : {}),
    max_in_flight: a.max_in_flight,
    peak_in_flight: run.peak_in_flight,
    completed: results.filter((r) => r.completed).length,
    counts: run.counts,
    ...(i.warmup_s > 0 ? { steady: { from_s: i.warmup_s, counts: run.steady } } : {}),
    connect: run.connect,
    handshake: run.handshake,
    start_lag: run.start_lag,
  });
  return { results, ended, summary, scheduled: schedule.length };
}
