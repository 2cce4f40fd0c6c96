import { parseFlags, UsageError } from '@duplex-bench/cli';
import type { DialectOptions } from '@duplex-bench/run';
import { DIALECT_FLAGS, parseDialectOptions } from '../run/dialect-options';
import { defaultOutputRate } from '../run/run-options';

export const RECORD_FLAGS = {
  url: { kind: 'string', required: true, group: 'connection', help: 'ws:// or wss:// endpoint of the realtime server', value: 'URL' },
  ...DIALECT_FLAGS,
  concurrency: { kind: 'int', min: 1, required: true, group: 'load', help: 'sessions at a time', value: 'N' },
  'per-subset': { kind: 'int', min: 1, default: 8, group: 'input', help: 'synthetic dataset: samples per subset (4 subsets, 2 variants each)', value: 'N' },
  output: { kind: 'string', required: true, group: 'output', help: 'recording directory; recording into it again resumes', value: 'DIR' },
  dataset: { kind: 'string', group: 'input', help: 'a directory of mono PCM16 WAV files at --sample-rate (subdirectories become subsets) instead of the synthetic dataset', value: 'DIR' },
  'min-input-s': { kind: 'number', min: 0, exclusive: true, default: 20, group: 'input', help: 'synthetic dataset: shortest input, seconds', value: 'S' },
  'max-input-s': { kind: 'number', min: 0, exclusive: true, default: 60, group: 'input', help: 'synthetic dataset: longest input, seconds', value: 'S' },
  'output-sample-rate': { kind: 'int', min: 1, group: 'dialect', help: "output audio rate of the figures and output.wav, Hz; overrides the server's grant", value: 'HZ' },
  trace: { kind: 'enum', values: ['full', 'events', 'off'], default: 'full', group: 'output', help: 'full (every event), events (audio payloads as byte lengths) or off (send receipts only)' },
  postprocess: { kind: 'enum', values: ['pool', 'inline', 'off'], default: 'pool', group: 'output', help: 'replay each finished trace in a process pool (pool), in the recording process (inline), or not at all (off)' },
  'connect-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 10, group: 'limits', help: 'bound on connect plus handshake, seconds', value: 'S' },
  'drain-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 30, group: 'limits', help: 'bound on the end of input (the server finishing its answer), seconds', value: 'S' },
  'allow-unqualified': { kind: 'bool', group: 'output', help: 'exit 0 even when a packet was late (else 3)' },
  quiet: { kind: 'bool', group: 'output', help: 'no progress lines' },
} as const;

export interface RecordOptions extends DialectOptions {
  url: string;
  concurrency: number;
  per_subset: number;
  output: string;
  dataset?: string;
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
  if (f['min-input-s'] > f['max-input-s']) throw new UsageError(`--min-input-s ${f['min-input-s']} is above --max-input-s ${f['max-input-s']}`);
  return {
    url: f.url,
    ...dialect,
    concurrency: f.concurrency,
    per_subset: f['per-subset'],
    output: f.output,
    dataset: f.dataset,
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
  };
}
