import { readRunRecord } from './run-record';
import { writeDuplexMetrics } from './duplex-metrics-file';
import type { StallsSummary } from '@duplex-bench/telemetry';
import { readFile } from 'node:fs/promises';
import { behaviourSummary, decodeHistogram, decodeSamples, mergeHistograms, mergeSamples, percentilesMs, type BehaviourParts, type BehaviourSummary, type MergedPacing, type SamplesFile, type UnitCounts } from '@duplex-bench/metrics';
import { ResultsInputError } from './input-error';
import { type DuplexAggregate, duplexMetrics, type DuplexSession, legacyFigures, type LegacyFigures, MEASUREMENT_ORIGIN, type RunSummary, UNIT_ORIGIN, unitSummary } from './summary';
import type { SessionResult } from './session-result';
import { notValid, readRunJson, readSessionRows, RunFileError, runFile } from './run-files';

export interface MergedSummary extends Omit<MergedPacing, 'late_times_s'> {
  qualified: boolean;
  /** `--conversation`: every process's behaviour events pooled (histograms merged, counts summed). */
  behaviour?: BehaviourSummary;
  /** `run --processes --sampler`: every process's loop stalls with their causes, pooled. */
  stalls?: StallsSummary;
  /** `run --processes --slo`: each term judged on this pooled summary. */
  slo?: RunSummary['slo'];
  /** `run --processes --server-metrics`: the launcher's one scrape of the server, over the whole run. */
  server_metrics?: RunSummary['server_metrics'];
  interrupted: boolean;
  sessions: RunSummary['sessions'];
  cpu_cores: { total: number; per_process: number[] };
  /** CPU seconds of every process over every packet sent, in µs; null when a process did not state its CPU seconds. */
  cpu_us_per_packet: number | null;
  peak_rss_bytes: { max: number; per_process: number[] };
  /** Each process's RSS growth after the warm-up (null where it did not say), MiB per minute, and the most of them. */
  rss_growth_mib_per_min?: { max: number | null; per_process: Array<number | null> };
  event_loop_lag_ms: { max: number | null; over_80ms: number };
  first_late_s: number | null;
  /** The processes' warm-up; `pacing_deviation_steady_ms` covers the packets after it. */
  warmup_s: number;
  /** Server errors, unknown event types and `server_event_seq` gaps, summed over processes. */
  events: RunSummary['events'];
  /** Responses of every process's sessions pooled, when the server answered with model turns. */
  duplex?: DuplexAggregate;
  /** Native: unit lag and misses (realtime) or the lockstep pace, pooled over every process's units. */
  unit_lag_ms?: RunSummary['unit_lag_ms'];
  /** Every process's stamped frames' receive delay pooled (HDR histograms merged); absent when no server stamped a frame. */
  receive_delay_ms?: RunSummary['receive_delay_ms'];
  /** Times a socket's reads waited for the next timers phase, summed over processes; absent when none did. */
  reads_paused?: number;
  unit_miss_rate?: RunSummary['unit_miss_rate'];
  units?: RunSummary['units'];
  lockstep?: RunSummary['lockstep'];
  pacing?: RunSummary['pacing'];
  pacing_verdict?: string;
  /** vllm-omni parts: the pooled figures under vLLM-Omni's names. */
  vllm_omni?: RunSummary['vllm_omni'];
  video?: RunSummary['video'];
  /** sglang-omni legacy parts (`--profile qwen3-omni-half-duplex`): their sessions' figures pooled (`mergedLegacy`). */
  legacy?: RunSummary['legacy'];
  sources: string[];
  measurement_origin: Record<string, string>;
}

/** A run read back for pooling; `steady_from_s`: when its warm-up ended (start gate + `--warmup-s`), when it had one. */
export interface RunForMerge {
  samples: SamplesFile;
  summary: RunSummary | null;
  steady_from_s?: number;
}

/** When a run's warm-up ended on the host clock: its run.json start gate plus its summary's warm-up, if it had one. */
export async function steadyFrom(dir: string, summary: RunSummary | null): Promise<number | undefined> {
  if (!summary || !(summary.warmup_s > 0)) return undefined;
  const run = await readRunRecord(dir);
  return typeof run?.gate_s === 'number' ? run.gate_s + summary.warmup_s : undefined;
}

export async function readRunForMerge(dir: string): Promise<RunForMerge> {
  let bytes: Buffer;
  try {
    bytes = await readFile(runFile(dir, 'samples'));
  } catch (err) {
    throw new ResultsInputError('NO_SAMPLES', `${dir}: no samples.msgpack (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let samples: SamplesFile;
  try {
    samples = decodeSamples(bytes);
  } catch (err) {
    throw new ResultsInputError('BAD_RUN_FILE', `${runFile(dir, 'samples')}: ${notValid('msgpack', err)}`);
  }
  // A process that died before its summary still has its samples; a summary cut short is named.
  const summary = await readRunJson<RunSummary>(dir, 'summary');
  return { samples, summary, steady_from_s: await steadyFrom(dir, summary) };
}

/**
 * Moves a run's times onto another clock (`shift_s` added to every packet time and its warm-up end):
 * runs of other hosts onto the first run's monotonic clock, through their offsets to one reference.
 */
export function shiftRun(run: RunForMerge, shift_s: number): RunForMerge {
  if (shift_s === 0) return run;
  for (const s of run.samples.sessions) {
    for (const column of [s.scheduled_s, s.start_s, s.completed_s]) for (let i = 0; i < column.length; i++) column[i] += shift_s;
  }
  return { ...run, steady_from_s: run.steady_from_s === undefined ? undefined : run.steady_from_s + shift_s };
}

/** Pools runs of processes that streamed at once on one host (or lined up by `shiftRun`) into one summary. Pure. */
export function buildMergedSummary(dirs: string[], runs: RunForMerge[]): MergedSummary {
  const { late_times_s, ...pacing } = mergeSamples(
    runs.map((r) => r.samples),
    runs.map((r) => r.steady_from_s),
  );
  const summaries = runs.map((r) => r.summary);
  const reasons: Record<string, number> = {};
  const sessions = { started: 0, completed: 0, incomplete: 0, with_violation: pacing.sessions_with_violation, incomplete_reasons: reasons };
  for (const s of summaries) {
    if (!s) continue;
    sessions.started += s.sessions.started;
    sessions.completed += s.sessions.completed;
    sessions.incomplete += s.sessions.incomplete;
    for (const [k, v] of Object.entries(s.sessions.incomplete_reasons)) reasons[k] = (reasons[k] ?? 0) + v;
  }
  const codes: Record<string, number> = {};
  const events: RunSummary['events'] = { server_errors: 0, server_error_codes: codes, unknown: {} };
  for (const s of summaries) {
    if (!s?.events) continue;
    events.server_errors += s.events.server_errors;
    for (const [k, v] of Object.entries(s.events.server_error_codes ?? {})) codes[k] = (codes[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.events.unknown)) events.unknown[k] = (events.unknown[k] ?? 0) + v;
    const seq = s.events.server_event_seq;
    if (seq) {
      const into = (events.server_event_seq ??= { sessions: 0, gaps: 0, missing_events: 0, not_rising: 0 });
      into.sessions += seq.sessions;
      into.gaps += seq.gaps;
      into.missing_events += seq.missing_events;
      into.not_rising += seq.not_rising;
    }
  }
  const units = mergedUnits(runs);
  const received = mergedReceiveDelay(runs);
  const lagMaxes = summaries.map((s) => s?.event_loop_lag_ms.max ?? null).filter((v): v is number => v !== null);
  const interrupted = summaries.some((s) => s === null || s.interrupted);
  return {
    qualified: !interrupted && pacing.packets.late === 0 && pacing.packets.sent > 0 && !units.lockstep,
    interrupted,
    // Lockstep parts kept no schedule: the pool's pacing verdict does not apply either.
    ...(units.lockstep ? { pacing: 'lockstep' as const, pacing_verdict: 'not applicable (lockstep)' } : {}),
    ...pacing,
    sessions,
    cpu_us_per_packet:
      summaries.every((s) => s?.cpu_cores.cpu_s !== undefined) && pacing.packets.sent > 0
        ? Math.round((summaries.reduce((a, s) => a + (s?.cpu_cores.cpu_s ?? 0), 0) / pacing.packets.sent) * 1e7) / 10
        : null,
    cpu_cores: {
      total: Math.round(summaries.reduce((a, s) => a + (s?.cpu_cores.total ?? 0), 0) * 1000) / 1000,
      per_process: summaries.map((s) => s?.cpu_cores.total ?? 0),
    },
    peak_rss_bytes: { max: Math.max(0, ...summaries.map((s) => s?.peak_rss_bytes ?? 0)), per_process: summaries.map((s) => s?.peak_rss_bytes ?? 0) },
    ...rssGrowth(summaries),
    event_loop_lag_ms: {
      max: lagMaxes.length > 0 ? Math.max(...lagMaxes) : null,
      over_80ms: summaries.reduce((a, s) => a + (s?.event_loop_lag_ms.over_80ms ?? 0), 0),
    },
    first_late_s: late_times_s[0] ?? null,
    warmup_s: Math.max(0, ...summaries.map((s) => s?.warmup_s ?? 0)),
    events,
    ...units,
    ...received,
    ...mergedBehaviour(runs),
    sources: dirs,
    measurement_origin: {
      ...MEASUREMENT_ORIGIN,
      receive_delay_ms: `${MEASUREMENT_ORIGIN.receive_delay_ms}; pooled over every stamped frame of every process (HDR histograms merged)`,
      reads_paused: `${MEASUREMENT_ORIGIN.reads_paused}; summed over processes`,
      ...(units.unit_lag_ms ? { ...UNIT_ORIGIN, unit_lag_ms: `${UNIT_ORIGIN.unit_lag_ms}; pooled over every unit of every process (HDR histograms merged)` } : {}),
      pacing_deviation_ms: `${MEASUREMENT_ORIGIN.pacing_deviation_ms}; pooled over every packet of every process (HDR histograms merged)`,
      peak_overlapping_streams: 'all processes on the host monotonic clock: most sessions between first append and one packet after the last',
      first_late_s: 'host monotonic clock: send start of the earliest late packet',
    },
  };
}

/** The behaviour block of the processes that followed a conversation, pooled; none when none did. */
function mergedBehaviour(runs: RunForMerge[]): { behaviour?: BehaviourSummary } {
  const parts = runs.map((r) => r.samples.behaviour).filter((p): p is BehaviourParts => p !== undefined);
  if (parts.length === 0) return {};
  const origin = runs.find((r) => r.summary?.behaviour)?.summary?.behaviour?.measurement_origin ?? {};
  const pooled = Object.fromEntries(Object.entries(origin).map(([k, v]) => [k, `${v}; pooled over every process`]));
  return { behaviour: behaviourSummary(parts, pooled) };
}

/**
 * The unit figures of several processes: their lag histograms (samples.msgpack) merged, their unit
 * counts summed, their sessions' units per second pooled. Runs without units (other dialects) add nothing.
 */
function mergedUnits(runs: RunForMerge[]): Pick<MergedSummary, 'unit_lag_ms' | 'unit_miss_rate' | 'units' | 'lockstep'> {
  const withUnits = runs.filter((r) => r.samples.histograms.unit_lag && r.summary && (r.summary.units || r.summary.lockstep));
  if (withUnits.length === 0) return {};
  const lag = mergeHistograms(withUnits.map((r) => decodeHistogram(r.samples.histograms.unit_lag as string)));
  const counts: UnitCounts = { unit_ms: 0, expected: 0, done: 0, missed: 0, done_before_input: 0 };
  const per_session: number[] = [];
  for (const r of withUnits) {
    const s = r.summary as RunSummary;
    const c = s.units ?? (s.lockstep ? { ...s.lockstep.units, unit_ms: s.lockstep.unit_ms, missed: 0 } : null);
    if (!c) continue;
    counts.unit_ms = c.unit_ms;
    counts.expected += c.expected;
    counts.done += c.done;
    counts.missed += c.missed;
    counts.done_before_input += c.done_before_input;
    per_session.push(...(s.lockstep?.units_per_s.per_session ?? []));
  }
  const merged = unitSummary(withUnits.some((r) => r.summary?.lockstep) ? 'lockstep' : 'realtime', counts, lag, per_session);
  // A histogram read back from its file knows its max only as the top of the max's bucket; each
  // run's summary states the exact max. Clamped to the largest of those, a percentile in the max's
  // bucket reads as the run's own summary read it (one run merged with itself gives its own figures).
  const exact = withUnits.map((r) => r.summary?.unit_lag_ms?.max);
  const f = merged.unit_lag_ms;
  if (f && f.max !== null && exact.every((m): m is number => typeof m === 'number')) {
    const max = Math.max(...exact);
    const clamp = (v: number | null) => (v === null ? v : Math.min(v, max));
    merged.unit_lag_ms = { ...f, p50: clamp(f.p50), p95: clamp(f.p95), p99: clamp(f.p99), max: clamp(f.max) };
  }
  return merged;
}

/**
 * The receive delay of every process's stamped frames (their samples.msgpack histograms merged) and
 * the held-back reads summed; nothing for a figure no process has.
 */
function mergedReceiveDelay(runs: RunForMerge[]): Pick<MergedSummary, 'receive_delay_ms' | 'reads_paused'> {
  const stamped = runs.filter((r) => r.samples.histograms.receive_delay);
  const paused = runs.reduce((a, r) => a + (r.summary?.reads_paused ?? 0), 0);
  const out: Pick<MergedSummary, 'receive_delay_ms' | 'reads_paused'> = paused > 0 ? { reads_paused: paused } : {};
  if (stamped.length === 0) return { ...out, receive_delay_ms: null };
  const f = percentilesMs(mergeHistograms(stamped.map((r) => decodeHistogram(r.samples.histograms.receive_delay as string))));
  // As for unit lag: the file's histogram knows its max only as its bucket's top; each summary states the exact max.
  const exact = stamped.map((r) => r.summary?.receive_delay_ms?.max);
  if (f.max !== null && exact.every((m): m is number => typeof m === 'number')) {
    const max = Math.max(...exact);
    const clamp = (v: number | null) => (v === null ? v : Math.min(v, max));
    return { ...out, receive_delay_ms: { ...f, p50: clamp(f.p50), p90: clamp(f.p90), p99: clamp(f.p99), p99_9: clamp(f.p99_9), max: clamp(f.max) } };
  }
  return { ...out, receive_delay_ms: f };
}

type DuplexSessions = DuplexSession[];

/** The sessions of a run's `duplex_metrics.json`; none when the run has no such file. */
async function readDuplexSessions(dir: string): Promise<DuplexSessions> {
  let file: {
    duplex_session_metrics?: Array<Record<string, unknown> & { session_id: string; completed?: boolean; reason?: SessionResult['reason']; responses?: SessionResult['responses'] }>;
  };
  try {
    const read = await readRunJson<typeof file>(dir, 'duplex_metrics');
    if (read === null) return [];
    file = read;
  } catch (err) {
    if (err instanceof RunFileError) throw new ResultsInputError('BAD_RUN_FILE', err.message);
    throw err;
  }
  return (file.duplex_session_metrics ?? []).map(({ session_id, completed, reason, responses, ...metrics }) => ({
    id: session_id,
    // Every session in the file says whether it completed; a file without the field is read as complete.
    completed: completed !== false,
    ...(reason ? { reason } : {}),
    responses,
    response_metrics: metrics as unknown as SessionResult['response_metrics'],
  }));
}

/** Every run's answered sessions (`duplex_metrics.json`), ids prefixed with their run's index, as processes reuse them. */
export async function pooledDuplexSessions(dirs: string[]): Promise<DuplexSessions> {
  const runs = await Promise.all(dirs.map(readDuplexSessions));
  return runs.flatMap((run, i) => run.map((s) => ({ ...s, id: `p${i}/${s.id}` })));
}

/** One part of a merge, for its `legacy` block: its session rows (sessions.jsonl) and its summary's block. */
export interface LegacyPart {
  rows: Array<Pick<SessionResult, 'dialect_events'>>;
  legacy?: LegacyFigures;
}

/**
 * The parts' `legacy` blocks pooled as `run` builds one (`legacyFigures`): from every part's session
 * rows, whose `dialect_events` keep each session's counts and probe ack, so the counts are summed and
 * `probe_ack_s` is the distribution over every answered probe of every part. A part whose rows hold
 * none (sessions.jsonl missing or cut) but whose summary has the block adds its sessions and counts;
 * its probe acks are in its summary only as {count, mean, p50, p99}, and percentiles do not pool, so
 * `probe_ack_s` leaves them out and its `measurement_origin` says over how many of the parts it is.
 * Null when no part has legacy figures.
 */
export function mergedLegacy(parts: LegacyPart[]): LegacyFigures | null {
  const fromRows = parts.map((p) => legacyFigures(p.rows));
  const summaryOnly = parts.filter((p, i) => !fromRows[i] && p.legacy).map((p) => p.legacy as LegacyFigures);
  const pooled = legacyFigures(parts.filter((_, i) => fromRows[i]).flatMap((p) => p.rows));
  if (!pooled && summaryOnly.length === 0) return null;
  const base: LegacyFigures = pooled ?? { ...summaryOnly[0], sessions: 0, probe_ack_s: null, responses_created: 0, responses_overlapped_by_speech: 0, responses_open_at_close: 0 };
  const merged: LegacyFigures = { ...base, measurement_origin: { ...base.measurement_origin } };
  for (const l of summaryOnly) {
    merged.sessions += l.sessions;
    merged.responses_created += l.responses_created;
    merged.responses_overlapped_by_speech += l.responses_overlapped_by_speech;
    merged.responses_open_at_close += l.responses_open_at_close;
  }
  const withRows = fromRows.filter((f) => f !== null).length;
  merged.measurement_origin.pooled =
    summaryOnly.length === 0
      ? `every part's sessions (sessions.jsonl dialect_events) pooled: counts summed, probe_ack_s over every answered probe of ${withRows} part(s)`
      : `counts summed over ${withRows + summaryOnly.length} part(s) (${summaryOnly.length} from their summary's legacy block, their sessions.jsonl holding no rows); probe_ack_s over the ${withRows} part(s) with session rows only (${summaryOnly.reduce((n, l) => n + (l.probe_ack_s?.count ?? 0), 0)} acks left out: a summary keeps {count, mean, p50, p99}, and percentiles do not pool)`;
  return merged;
}

/** The `legacy` block of runs merged: each run's session rows read, with its summary's block (`legacies[i]`, run i's) where the rows hold none. */
export async function mergeLegacy(dirs: string[], legacies: Array<LegacyFigures | undefined>): Promise<LegacyFigures | null> {
  const parts = await Promise.all(
    dirs.map(async (dir, i) => {
      try {
        return { rows: await readSessionRows<Pick<SessionResult, 'dialect_events'>>(dir), legacy: legacies[i] };
      } catch (err) {
        if (err instanceof RunFileError) throw new ResultsInputError('BAD_RUN_FILE', err.message);
        throw err;
      }
    }),
  );
  return mergedLegacy(parts);
}

/**
 * Pools the responses of several runs (each process's `duplex_metrics.json`) and writes the pooled
 * file to `output`. Session ids are prefixed with their run's index, as processes reuse them.
 */
export async function mergeDuplex(dirs: string[], output: string): Promise<DuplexAggregate | null> {
  const sessions = await pooledDuplexSessions(dirs);
  const pooled = duplexMetrics(sessions);
  if (!pooled) return null;
  await writeDuplexMetrics(output, { ...pooled.file, sources: dirs });
  return pooled.aggregate;
}


/**
 * Pools the runs of a launcher's children (`dirs[i]` is child i's). A child that died left no
 * summary: its `concurrency` sessions count as incomplete (`process_died`) and it is in `died`; one
 * whose summary does not read counts so too, its failure naming the file and what is wrong.
 */
export async function mergeChildren(
  dirs: string[],
  outcomes: Array<{ index: number; failure: string | null }>,
  concurrency: number,
): Promise<{ merged: MergedSummary; died: Array<{ index: number; failure: string | null }>; summarised: string[] }> {
  const children = await Promise.all(
    dirs.map(async (dir) => {
      const samples = await readFile(runFile(dir, 'samples')).then(
        (bytes) => {
          try {
            return decodeSamples(bytes);
          } catch (err) {
            throw new RunFileError(runFile(dir, 'samples'), notValid('msgpack', err));
          }
        },
        () => null,
      );
      // A child whose summary does not read is pooled as one that left none, with what is wrong named;
      // a run.json that does not read leaves its warm-up uncut, as it always did.
      const { summary, unread } = await readRunJson<RunSummary>(dir, 'summary').then(
        (read) => ({ summary: read, unread: null }),
        (err: Error) => ({ summary: null, unread: `left a summary that does not read: ${err.message}` }),
      );
      return { samples, summary, unread, steady_from_s: await steadyFrom(dir, summary).catch(() => undefined) };
    }),
  );
  const merged = buildMergedSummary(
    dirs.filter((_, i) => children[i].samples),
    children.filter((c) => c.samples).map((c) => ({ samples: c.samples as SamplesFile, summary: c.summary, steady_from_s: c.steady_from_s })),
  );
  const died = outcomes.filter((c) => c.failure !== null || !children[c.index].summary).map((c) => ({ ...c, failure: c.failure ?? children[c.index].unread }));
  for (const c of died) {
    if (children[c.index].summary) continue;
    merged.sessions.started += concurrency;
    merged.sessions.incomplete += concurrency;
    merged.sessions.incomplete_reasons.process_died = (merged.sessions.incomplete_reasons.process_died ?? 0) + concurrency;
  }
  return { merged, died, summarised: dirs.filter((_, i) => children[i].summary) };
}

/** The processes' RSS growth side by side, when any stated one. */
function rssGrowth(summaries: Array<RunSummary | null>): Pick<MergedSummary, 'rss_growth_mib_per_min'> {
  const per_process = summaries.map((s) => s?.rss?.growth_mib_per_min ?? null);
  const stated = per_process.filter((g): g is number => g !== null);
  return stated.length > 0 ? { rss_growth_mib_per_min: { max: Math.max(...stated), per_process } } : {};
}
