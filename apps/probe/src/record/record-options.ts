import { parseFlags, telemetryOptions, UsageError, type TelemetryOptions } from '@duplex-bench/cli';
import type { DialectOptions } from '@duplex-bench/run';
import { conversationOptions, type ConversationOptions } from '../run/conversation-options';
import { parseDialectOptions } from '../run/dialect-options';
import { defaultOutputRate } from '../run/run-options';
import { RECORD_CONVERSATION_DURATION_S, RECORD_FLAGS } from './record-flags';


export interface RecordOptions extends DialectOptions, ConversationOptions, TelemetryOptions {
  url: string;
  concurrency: number;
  per_subset: number;
  output: string;
  dataset?: string;
  /** With --conversation: each sample's length; the script starts again until it ends, seconds. */
  duration_s: number;
  min_input_s: number;
  max_input_s: number;
  output_sample_rate: number;
  output_sample_rate_given: boolean;
  trace: 'full' | 'events' | 'off';
  /** Where finished sessions are replayed: a process pool (default), the recording process itself, or nowhere. */
  postprocess: 'pool' | 'inline' | 'off';
  connect_timeout_ms: number;
  drain_timeout_ms: number;
  allow_unqualified: boolean;
  quiet: boolean;
}

export function parseRecordOptions(argv: string[]): RecordOptions {
  const f = parseFlags(argv, RECORD_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (!/^wss?:\/\//.test(f.url)) throw new UsageError(`--url must start with ws:// or wss://, got "${f.url}"`);
  const dialect = parseDialectOptions(f);
  // A recording's per-sample summary reports pacing and responses, not lockstep's units/s: a lockstep recording would say nothing true.
  if (dialect.pacing === 'lockstep') throw new UsageError('--pacing lockstep is for run (record reports realtime samples only)');
  if (f.postprocess !== 'off' && f.trace !== 'full') throw new UsageError(`--postprocess ${f.postprocess} replays full traces; use --trace full or --postprocess off`);
  if (f.conversation !== undefined && f.dataset !== undefined) throw new UsageError('--conversation and --dataset are two inputs: give one');
  if (f.duration !== undefined && f.conversation === undefined) throw new UsageError("--duration is a conversation's length: it goes with --conversation (a dataset's samples have their own)");
  if (f['min-input-s'] > f['max-input-s']) throw new UsageError(`--min-input-s ${f['min-input-s']} is above --max-input-s ${f['max-input-s']}`);
  return {
    url: f.url,
    ...dialect,
    concurrency: f.concurrency,
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
    drain_timeout_ms: f['drain-timeout-s'] * 1000,
    allow_unqualified: f['allow-unqualified'],
    quiet: f.quiet,
    ...telemetryOptions(f),
  };
}
