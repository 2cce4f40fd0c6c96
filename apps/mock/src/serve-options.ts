import { parseFlags, UsageError } from '@duplex-bench/launcher';

export const SERVE_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai'], default: 'native' },
  profile: { kind: 'enum', values: ['append-echo', 'model'], default: 'append-echo' },
  host: { kind: 'string', default: '127.0.0.1' },
  port: { kind: 'int', min: 0, default: 8765 },
  'replies-per-append': { kind: 'int', min: 0, default: 3 },
  'output-sample-rate': { kind: 'int', min: 1, default: 22050 },
  'burst-units': { kind: 'int', min: 1, default: 1 },
  'ttfp-ms': { kind: 'number', min: 0, default: 200 },
  rtf: { kind: 'number', min: 0, exclusive: true, default: 0.5 },
  'turn-every-s': { kind: 'number', min: 0, exclusive: true, default: 5 },
  'tokens-per-step': { kind: 'int', min: 0, default: 0 },
  'max-sessions': { kind: 'int', min: 1 },
  'stats-output': { kind: 'string' },
} as const;

export interface ServeOptions {
  profile: 'append-echo' | 'model';
  model: { ttfp_ms: number; rtf: number; burst_units: number; turn_every_s: number; tokens_per_step?: number };
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
  return {
    profile: f.profile as ServeOptions['profile'],
    model: {
      ttfp_ms: f['ttfp-ms'],
      rtf: f.rtf,
      burst_units: f['burst-units'],
      turn_every_s: f['turn-every-s'],
      tokens_per_step: f['tokens-per-step'] || undefined,
    },
    host: f.host,
    port: f.port,
    replies_per_append: f['replies-per-append'],
    output_sample_rate: f['output-sample-rate'],
    max_sessions: f['max-sessions'],
    stats_output: f['stats-output'],
  };
}
