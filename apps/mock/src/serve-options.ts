import { parseFlags, UsageError } from '@duplex-bench/launcher';

export const SERVE_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai'], default: 'native' },
  profile: { kind: 'enum', values: ['append-echo', 'model'], default: 'append-echo' },
  host: { kind: 'string', default: '127.0.0.1' },
  port: { kind: 'int', min: 0, default: 8765 },
  'replies-per-append': { kind: 'int', min: 0, default: 3 },
  'output-sample-rate': { kind: 'int', min: 1, default: 22050 },
  'burst-units': { kind: 'int', min: 1, default: 1 },
  'max-sessions': { kind: 'int', min: 1 },
  'stats-output': { kind: 'string' },
} as const;

export interface ServeOptions {
  host: string;
  port: number;
  replies_per_append: number;
  output_sample_rate: number;
  max_sessions?: number;
  stats_output?: string;
}

export function parseServeOptions(argv: string[]): ServeOptions {
  const f = parseFlags(argv, SERVE_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f.port > 65535) throw new UsageError(`--port must be at most 65535, got ${f.port}`);
  if (f.protocol !== 'native') throw new UsageError(`--protocol ${f.protocol} is not available in this version; use native`);
  if (f.profile !== 'append-echo') throw new UsageError(`--profile ${f.profile} is not available in this version; use append-echo`);
  if (f['burst-units'] !== 1) throw new UsageError('--burst-units applies to the model profile, not available in this version');
  return {
    host: f.host,
    port: f.port,
    replies_per_append: f['replies-per-append'],
    output_sample_rate: f['output-sample-rate'],
    max_sessions: f['max-sessions'],
    stats_output: f['stats-output'],
  };
}
