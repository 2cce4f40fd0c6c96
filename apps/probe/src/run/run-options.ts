import { parseFlags, serverMetricsOptions, telemetryOptions, UsageError } from '@duplex-bench/cli';
import { arrivalOptions, meanDurationS, parseDialectOptions, parseShard, shardSessions, timeUrlOf, type DialectOptions, type RunOptions, type StallKind } from '@duplex-bench/run';
import { judgedLive, parseSlo, SloError } from '@duplex-bench/results';
import { conversationOptions } from './conversation-options';
import { RUN_FLAGS } from './run-flags';

export type { RunOptions } from '@duplex-bench/run';

/**
 * sglang-omni ends a session at 240 s (`SESSION_LIMIT_S`), and its client caps a session at 230 s
 * to leave 10 s for the drain and close (benchmarks/duplex/client.py@3d801fa0 `MAX_TIMEOUT_S`).
 */
export const SGLANG_SESSION_CAP_S = 230;

/** A session longer than the server allows is refused before the run, in one line: `--max-session-s` says how long the server allows. */
function checkSessionCap(protocol: string, given: number | undefined, session_s: number | undefined): void {
  const cap = given ?? (protocol === 'native' || protocol === 'sglang-legacy' ? SGLANG_SESSION_CAP_S : undefined);
  if (cap === undefined || session_s === undefined || session_s <= cap) return;
  const why = given === undefined ? ` (sglang-omni ends a session at 240 s; its client stops at ${SGLANG_SESSION_CAP_S} s to leave time to drain)` : '';
  throw new UsageError(`a ${session_s} s session passes the server's session limit of ${cap} s${why}; give --max-session-s for a server that allows more`);
}

/** Flags of `probe run`, validated before anything starts. Throws UsageError. */
/** Where a run without --url points until the built-in mock has told its own URL. */
const BUILTIN_MOCK_URL = 'ws://127.0.0.1:0/v1/realtime';

export function parseRunOptions(argv: string[]): RunOptions {
  const f = parseFlags(argv, RUN_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f['mock-profile'] !== undefined && f.url !== undefined) throw new UsageError('--mock-profile is for a run without --url (the built-in mock)');
  // No --url: the run starts the built-in mock and takes its URL (runMain, withBuiltinMock).
  const builtin = f.url === undefined ? { ...(f['mock-profile'] !== undefined ? { mock_profile: f['mock-profile'] } : {}) } : undefined;
  const given = f.url ?? BUILTIN_MOCK_URL;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--url is not a URL: "${given}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UsageError(`--url must start with ws:// or wss://, got "${given}"`);
  }
  const arrivals = arrivalOptions(f);
  if (arrivals && f.concurrency !== undefined) throw new UsageError('--arrival-rate and --concurrency are two loads: give one');
  if (!arrivals && f.concurrency === undefined) throw new UsageError('--concurrency is required');
  // A conversation without --duration plays once in each session, to its own end: its length is the script's.
  const conversation_once = !arrivals && f.conversation !== undefined && f.duration === undefined;
  if (!arrivals && f.duration === undefined && !conversation_once) throw new UsageError('--duration is required');
  if (arrivals && (f.shard !== undefined || f['start-at'] !== undefined || f.processes > 1)) throw new UsageError('--arrival-rate runs in one process: no --shard, --start-at or --processes');
  if (f['metrics-port'] !== undefined && f['metrics-port'] > 0 && f['metrics-port'] + f.processes - 1 > 65535) throw new UsageError(`--metrics-port ${f['metrics-port']} with --processes ${f.processes}: the children's ports (P to P+${f.processes - 1}) pass 65535`);
  if (f['sampler-dir'] !== undefined && !f.sampler) throw new UsageError('--sampler-dir goes with --sampler');
  if (f.sampler && process.platform !== 'linux') throw new UsageError('--sampler reads /proc: Linux only');
  if (f['dashboard-port'] !== undefined && f.processes > 1) throw new UsageError('--dashboard-port draws one process: run it without --processes (each child serves its own /metrics with --metrics-port)');
  if (arrivals && f.pacing === 'lockstep') throw new UsageError('--arrival-rate streams in real time: it does not go with --pacing lockstep');
  const dialect = parseDialectOptions(f);
  // A refused arrival is blocked, which is what an arrival run measures: retried only when asked.
  if (arrivals && f['admission-retries'] === undefined) dialect.admission = { ...dialect.admission, retries: 0 };
  checkSessionCap(dialect.protocol, f['max-session-s'], f.duration ?? (arrivals?.duration.kind === 'fixed' ? arrivals.duration.s : undefined));
  const concurrency = f.concurrency ?? 0;
  const duration_s = f.duration ?? (arrivals ? (meanDurationS(arrivals.duration) ?? 0) : 0);
  const shard = f.shard === undefined ? undefined : parseShard(f.shard);
  if (shard === null) throw new UsageError(`--shard must be I/N with 0 <= I < N, got "${f.shard}"`);
  if (shard && shard.count > concurrency) throw new UsageError(`--concurrency ${concurrency} cannot be split over ${shard.count} shards`);
  if ((shard || f['start-at'] !== undefined) && f.processes > 1) throw new UsageError('--shard and --start-at are for one process per shard (no --processes)');
  if (f.conversation !== undefined && f.audio !== undefined) throw new UsageError('--conversation and --audio are two inputs: give one');
  if (f.conversation !== undefined && f.pacing === 'lockstep') throw new UsageError('--conversation streams in real time: it does not go with --pacing lockstep');
  const part = shard ? shardSessions(concurrency, shard) : { first: 0, count: concurrency, output: (root: string) => root };
  return {
    url: given,
    ...dialect,
    concurrency: part.count,
    arrivals,
    first_session: part.first,
    sessions_total: concurrency,
    shard,
    start_at_ms: f['start-at'],
    time_url: f['time-url'] === 'off' ? null : (f['time-url'] ?? (shard || f['start-at'] !== undefined ? timeUrlOf(given) : null)),
    clock_offset_ms: f['clock-offset-ms'],
    processes: f.processes,
    duration_s,
    conversation_once,
    output: part.output(f.output),
    output_sample_rate: f['output-sample-rate'] ?? defaultOutputRate(dialect.protocol),
    output_sample_rate_given: f['output-sample-rate'] !== undefined,
    audio: f.audio,
    ...conversationOptions(f),
    inject_stall_ms: f['inject-stall-ms'],
    inject_stall_kind: f['inject-stall-kind'] as StallKind,
    sampler: f.sampler ? { interval_ms: f['sampler-interval-ms'], ...(f['sampler-dir'] !== undefined ? { shared_dir: f['sampler-dir'] } : {}) } : null,
    trace: f.trace as RunOptions['trace'],
    keep_traces: f['keep-traces'],
    start_spread_ms: f['start-spread-ms'] ?? defaultStartSpreadMs(dialect.packet_ms, concurrency),
    warmup_s: f['warmup-s'],
    connect_timeout_ms: f['connect-timeout-s'] * 1000,
    ...(f['drain-timeout-s'] !== undefined ? { drain_timeout_ms: f['drain-timeout-s'] * 1000 } : {}),
    open_parallel: f['open-parallel'],
    start_timeout_ms: f['start-timeout-s'] * 1000,
    cpu_affinity: f['cpu-affinity'] as RunOptions['cpu_affinity'],
    allow_unqualified: f['allow-unqualified'],
    ...(builtin ? { builtin_mock: builtin } : {}),
    ...(f.slo !== undefined ? { slo: sloTerms(f.slo) } : {}),
    ...abortOnFail(f),
    quiet: f.quiet,
    ...telemetryOptions(f),
    ...scrapeOf(f, shard),
  };
}

/** `--server-metrics` and its flags, checked in every process; one scraper for a sharded run, shard 0's (the others would scrape the same server again). */
function scrapeOf(f: Parameters<typeof serverMetricsOptions>[0], shard: { index: number } | null | undefined) {
  const scrape = serverMetricsOptions(f);
  return shard && shard.index > 0 ? { server_metrics: null } : scrape;
}

/** `--abort-on-fail [--abort-grace-s S]`: only with --slo, and with at least one term judged live. */
function abortOnFail(f: { 'abort-on-fail': boolean; 'abort-grace-s': number; slo?: string; processes: number }): Pick<RunOptions, 'abort_on_fail'> {
  if (!f['abort-on-fail']) return {};
  if (f.slo === undefined) throw new UsageError('--abort-on-fail ends a run on its --slo terms: give --slo');
  if (f.processes > 1) throw new UsageError('--abort-on-fail watches one process: run it without --processes (--slo alone judges the pooled run at its end)');
  if (!parseSlo(f.slo).some(judgedLive)) throw new UsageError(`--abort-on-fail: none of the --slo terms can be judged before the end (live: incomplete<=N, ttfp_p99_ms, ttft_p99_ms, rtf_p99)`);
  return { abort_on_fail: { grace_s: f['abort-grace-s'] } };
}

/** `--slo TERMS`, read as the sweep reads them; a term that does not read is a usage error naming it. */
function sloTerms(text: string) {
  try {
    return parseSlo(text);
  } catch (err) {
    if (err instanceof SloError) throw new UsageError(err.message);
    throw err;
  }
}

/** Output rate assumed when the server states none: sglang-omni's 22,050 Hz, OpenAI's 24,000 Hz. */
export function defaultOutputRate(protocol: DialectOptions['protocol']): number {
  return protocol === 'native' ? 22050 : 24000;
}

/**
 * Session starts are spread over one packet, or 2 ms per session when that is longer. Each session's
 * first packet and the server's first answers cost more than later ones; at 512 sessions spread
 * over 80 ms they made the first 0.5 s the worst of a run (max 16-72 ms, client loop lag up to
 * 73 ms), and over 1,024 ms max 11-16 ms (`tools/bench/start-spread.sh`, docs/performance.md).
 */
export function defaultStartSpreadMs(packet_ms: number, concurrency: number): number {
  return Math.max(packet_ms, 2 * concurrency);
}
