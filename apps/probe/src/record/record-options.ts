import { parseFlags, telemetryOptions, UsageError } from '@duplex-bench/cli';
import { MAX_ARRIVALS, parseDialectOptions, type ArrivalProcess, type RecordOptions } from '@duplex-bench/run';
import { conversationOptions } from '../run/conversation-options';
import { defaultOutputRate } from '../run/run-options';
import { RECORD_CONVERSATION_DURATION_S, RECORD_FLAGS } from './record-flags';

export type { RecordOptions } from '@duplex-bench/run';

export function parseRecordOptions(argv: string[]): RecordOptions {
  const f = parseFlags(argv, RECORD_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f['mock-profile'] !== undefined && f.url !== undefined) throw new UsageError('--mock-profile is for a recording without --url (the built-in mock)');
  // No --url: recordMain starts the built-in mock and takes its URL.
  const url = f.url ?? 'ws://127.0.0.1:0/v1/realtime';
  if (!/^wss?:\/\//.test(url)) throw new UsageError(`--url must start with ws:// or wss://, got "${url}"`);
  const dialect = parseDialectOptions(f, process.env, { dataset: f.dataset !== undefined });
  // A recording's per-sample summary reports pacing and responses, not lockstep's units/s: a lockstep recording would say nothing true.
  if (dialect.pacing === 'lockstep') throw new UsageError('--pacing lockstep is for run (record reports realtime samples only)');
  if (f.postprocess !== 'off' && f.trace !== 'full') throw new UsageError(`--postprocess ${f.postprocess} replays full traces; use --trace full or --postprocess off`);
  if (f.conversation !== undefined && f.dataset !== undefined) throw new UsageError('--conversation and --dataset are two inputs: give one');
  if (f.duration !== undefined && f.conversation === undefined) throw new UsageError("--duration is a conversation's length: it goes with --conversation (a dataset's samples have their own)");
  if (f['min-input-s'] > f['max-input-s']) throw new UsageError(`--min-input-s ${f['min-input-s']} is above --max-input-s ${f['max-input-s']}`);
  const rate = f['arrival-rate'];
  if (rate === undefined && f.concurrency === undefined) throw new UsageError('--concurrency is required (or --arrival-rate)');
  if (rate !== undefined && f.concurrency !== undefined) throw new UsageError('--arrival-rate and --concurrency are two loads: give one');
  if (rate === undefined && f['run-for'] !== undefined) throw new UsageError('--run-for is for --arrival-rate');
  if (rate !== undefined && f['run-for'] !== undefined && rate * f['run-for'] > MAX_ARRIVALS) throw new UsageError(`--arrival-rate ${rate} for ${f['run-for']} s is more than ${MAX_ARRIVALS} arrivals`);
  // An arriving session a full server refuses is blocked, not retried, unless retries are asked for.
  if (rate !== undefined && f['admission-retries'] === undefined) dialect.admission = { ...dialect.admission, retries: 0 };
  return {
    url,
    ...(f.url === undefined ? { builtin_mock: f['mock-profile'] !== undefined ? { mock_profile: f['mock-profile'] } : {} } : {}),
    ...dialect,
    concurrency: f.concurrency ?? 0,
    arrivals:
      rate === undefined
        ? null
        : { rate_per_s: rate, process: f.arrivals as ArrivalProcess, ...(f['run-for'] !== undefined ? { run_for_s: f['run-for'] } : {}), max_in_flight: f['max-in-flight'], seed: f.seed, warmup_s: f['warmup-s'] },
    per_subset: f['per-subset'],
    output: f.output,
    dataset: f.dataset,
    ...conversationOptions(f),
    duration_s: f.duration ?? RECORD_CONVERSATION_DURATION_S,
    min_input_s: f['min-input-s'],
    max_input_s: f['max-input-s'],
    output_sample_rate: f['output-sample-rate'] ?? defaultOutputRate(dialect.protocol),
    output_sample_rate_given: f['output-sample-rate'] !== undefined,
    trace: f.trace as RecordOptions['trace'],
    postprocess: f.postprocess as RecordOptions['postprocess'],
    connect_timeout_ms: f['connect-timeout-s'] * 1000,
    ...(f['drain-timeout-s'] !== undefined ? { drain_timeout_ms: f['drain-timeout-s'] * 1000 } : {}),
    allow_unqualified: f['allow-unqualified'],
    quiet: f.quiet,
    ...telemetryOptions(f),
  };
}
