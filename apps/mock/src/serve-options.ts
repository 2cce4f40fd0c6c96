import { parseFlags, UsageError } from '@duplex-bench/launcher';

export const SERVE_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai'], default: 'native' },
  profile: { kind: 'enum', values: ['append-echo', 'model'], default: 'append-echo' },
  host: { kind: 'string', default: '127.0.0.1' },
  port: { kind: 'int', min: 0, default: 8765 },
  'replies-per-append': { kind: 'int', min: 0, default: 3 },
  'output-sample-rate': { kind: 'int', min: 1 },
  'burst-units': { kind: 'int', min: 1, default: 1 },
  'ttfp-ms': { kind: 'number', min: 0, default: 200 },
  rtf: { kind: 'number', min: 0, exclusive: true, default: 0.5 },
  'turn-every-s': { kind: 'number', min: 0, exclusive: true, default: 5 },
  'tokens-per-step': { kind: 'int', min: 0, default: 0 },
  'max-sessions': { kind: 'int', min: 1 },
  'stats-output': { kind: 'string' },
  'unit-ms': { kind: 'number', min: 0, exclusive: true, default: 80 },
  'event-names': { kind: 'enum', values: ['ga', 'beta'], default: 'ga' },
  'vllm-extensions': { kind: 'bool' },
  'vad-silence-ms': { kind: 'number', min: 0, exclusive: true, default: 500 },
  'tls-cert': { kind: 'string' },
  'tls-key': { kind: 'string' },
} as const;

export interface ServeOptions {
  protocol: 'native' | 'openai';
  profile: 'append-echo' | 'model';
  unit_ms: number;
  openai: { names: 'ga' | 'beta'; vllm: boolean; silence_ms: number };
  tls?: { cert: string; key: string };
  model: { ttfp_ms: number; rtf: number; burst_units: number; turn_every_s: number; tokens_per_step?: number };
  host: string;
  port: number;
  replies_per_append: number;
  /** Unset: the dialect's usual rate (22,050 Hz native, 24,000 Hz openai). */
  output_sample_rate?: number;
  max_sessions?: number;
  stats_output?: string;
}

export function parseServeOptions(argv: string[]): ServeOptions {
  const f = parseFlags(argv, SERVE_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f.port > 65535) throw new UsageError(`--port must be at most 65535, got ${f.port}`);
  const openaiOnly = (['event-names', 'vllm-extensions', 'vad-silence-ms'] as const).filter((k) => argv.some((a) => a === `--${k}` || a.startsWith(`--${k}=`)));
  if (f.protocol !== 'openai' && openaiOnly.length > 0) throw new UsageError(`--${openaiOnly[0]} is for --protocol openai`);
  if ((f['tls-cert'] === undefined) !== (f['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  if (!Number.isInteger((16 * f['unit-ms'])) || !Number.isInteger(24 * f['unit-ms'])) throw new UsageError(`--unit-ms ${f['unit-ms']} is not a whole number of samples at 16 and 24 kHz`);
  return {
    protocol: f.protocol as ServeOptions['protocol'],
    unit_ms: f['unit-ms'],
    openai: { names: f['event-names'] as 'ga' | 'beta', vllm: f['vllm-extensions'], silence_ms: f['vad-silence-ms'] },
    tls: f['tls-cert'] !== undefined && f['tls-key'] !== undefined ? { cert: f['tls-cert'], key: f['tls-key'] } : undefined,
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
