import { parseFlags, UsageError } from '@duplex-bench/launcher';

export const RUN_FLAGS = {
  url: { kind: 'string', required: true },
  protocol: { kind: 'enum', values: ['native', 'openai'], default: 'native' },
  concurrency: { kind: 'int', min: 1, required: true },
  duration: { kind: 'number', min: 0, exclusive: true, required: true },
  output: { kind: 'string', required: true },
  processes: { kind: 'int', min: 1, default: 1 },
  'packet-ms': { kind: 'number', min: 0, exclusive: true, default: 80 },
  'sample-rate': { kind: 'int', min: 1, default: 16000 },
  'output-sample-rate': { kind: 'int', min: 1, default: 22050 },
  audio: { kind: 'string' },
  'inject-stall-ms': { kind: 'number', min: 0, default: 0 },
  trace: { kind: 'enum', values: ['full', 'events', 'off'], default: 'off' },
  'keep-traces': { kind: 'bool' },
  'start-spread-ms': { kind: 'number', min: 0 },
  'warmup-s': { kind: 'number', min: 0, default: 0 },
  'connect-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 10 },
  'drain-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 30 },
  'open-parallel': { kind: 'int', min: 1, default: 64 },
  'start-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 60 },
  'cpu-affinity': { kind: 'enum', values: ['auto', 'off'], default: 'auto' },
  'allow-unqualified': { kind: 'bool' },
  quiet: { kind: 'bool' },
} as const;

export interface RunOptions {
  url: string;
  protocol: 'native';
  concurrency: number;
  processes: number;
  duration_s: number;
  output: string;
  packet_ms: number;
  sample_rate: number;
  output_sample_rate: number;
  audio?: string;
  inject_stall_ms: number;
  trace: 'full' | 'events' | 'off';
  keep_traces: boolean;
  start_spread_ms: number;
  warmup_s: number;
  connect_timeout_ms: number;
  drain_timeout_ms: number;
  open_parallel: number;
  start_timeout_ms: number;
  cpu_affinity: 'auto' | 'off';
  allow_unqualified: boolean;
  quiet: boolean;
}

/** Flags of `probe run`, validated before anything starts. Throws UsageError. */
export function parseRunOptions(argv: string[]): RunOptions {
  const f = parseFlags(argv, RUN_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  let url: URL;
  try {
    url = new URL(f.url);
  } catch {
    throw new UsageError(`--url is not a URL: "${f.url}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UsageError(`--url must start with ws:// or wss://, got "${f.url}"`);
  }
  if (f.protocol !== 'native') throw new UsageError(`--protocol ${f.protocol} is not available in this version; use native`);
  const packet_bytes = (f['sample-rate'] * 2 * f['packet-ms']) / 1000;
  if (!Number.isInteger(packet_bytes / 2)) {
    throw new UsageError(`--packet-ms ${f['packet-ms']} is not a whole number of samples at ${f['sample-rate']} Hz`);
  }
  if (f['sample-rate'] !== 16000) throw new UsageError('--sample-rate must be 16000 for the native dialect');
  return {
    url: f.url,
    protocol: 'native',
    concurrency: f.concurrency,
    processes: f.processes,
    duration_s: f.duration,
    output: f.output,
    packet_ms: f['packet-ms'],
    sample_rate: f['sample-rate'],
    output_sample_rate: f['output-sample-rate'],
    audio: f.audio,
    inject_stall_ms: f['inject-stall-ms'],
    trace: f.trace as RunOptions['trace'],
    keep_traces: f['keep-traces'],
    start_spread_ms: f['start-spread-ms'] ?? f['packet-ms'],
    warmup_s: f['warmup-s'],
    connect_timeout_ms: f['connect-timeout-s'] * 1000,
    drain_timeout_ms: f['drain-timeout-s'] * 1000,
    open_parallel: f['open-parallel'],
    start_timeout_ms: f['start-timeout-s'] * 1000,
    cpu_affinity: f['cpu-affinity'] as RunOptions['cpu_affinity'],
    allow_unqualified: f['allow-unqualified'],
    quiet: f.quiet,
  };
}
