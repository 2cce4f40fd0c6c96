import { parseFlags, UsageError } from '@duplex-bench/launcher';
import type { MockProfile, ModelOptions } from '@duplex-bench/mock-servers';

export const SERVE_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai'], default: 'native' },
  profile: { kind: 'enum', values: ['append-echo', 'nemotron', 'minicpmo', 'model'], default: 'append-echo' },
  host: { kind: 'string', default: '127.0.0.1' },
  port: { kind: 'int', min: 0, default: 8765 },
  'replies-per-append': { kind: 'int', min: 1, default: 3 },
  'output-sample-rate': { kind: 'int', min: 1 },
  'burst-units': { kind: 'int', min: 1 },
  'ttfp-ms': { kind: 'number', min: 0 },
  rtf: { kind: 'number', min: 0, exclusive: true },
  'turn-every-s': { kind: 'number', min: 0, exclusive: true },
  'tokens-per-step': { kind: 'int', min: 0, default: 0 },
  'max-sessions': { kind: 'int', min: 1 },
  'stats-output': { kind: 'string' },
  'unit-ms': { kind: 'number', min: 0, exclusive: true },
  'event-names': { kind: 'enum', values: ['ga', 'beta'], default: 'ga' },
  'vllm-extensions': { kind: 'bool' },
  'vad-silence-ms': { kind: 'number', min: 0, exclusive: true, default: 500 },
  flavor: { kind: 'enum', values: ['openai', 'vllm-omni'], default: 'openai' },
  'listen-every': { kind: 'int', min: 0, default: 0 },
  'disconnect-grace-s': { kind: 'number', min: 0, default: 30 },
  'tls-cert': { kind: 'string' },
  'tls-key': { kind: 'string' },
} as const;

export interface ServeOptions {
  protocol: 'native' | 'openai';
  profile: MockProfile;
  /** Unset: the profile's unit (native) or 80 ms (openai). */
  unit_ms?: number;
  openai: { names: 'ga' | 'beta'; vllm: boolean; silence_ms: number; flavor: 'openai' | 'vllm-omni'; listen_every: number; disconnect_grace_ms: number };
  tls?: { cert: string; key: string };
  /** Only what was given: each profile has its own timings. */
  model: Partial<ModelOptions>;
  host: string;
  port: number;
  replies_per_append: number;
  /** Unset: the profile's rate (native: 22,050 Hz nemotron and append-echo, 24,000 Hz minicpmo; openai 24,000 Hz). */
  output_sample_rate?: number;
  max_sessions?: number;
  stats_output?: string;
}

export function parseServeOptions(argv: string[]): ServeOptions {
  const f = parseFlags(argv, SERVE_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f.port > 65535) throw new UsageError(`--port must be at most 65535, got ${f.port}`);
  const openaiOnly = (['event-names', 'vllm-extensions', 'vad-silence-ms', 'flavor', 'listen-every', 'disconnect-grace-s'] as const).filter((k) => argv.some((a) => a === `--${k}` || a.startsWith(`--${k}=`)));
  if (f.protocol !== 'openai' && openaiOnly.length > 0) throw new UsageError(`--${openaiOnly[0]} is for --protocol openai`);
  if ((f['tls-cert'] === undefined) !== (f['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  const unit = f['unit-ms'];
  if (unit !== undefined && (!Number.isInteger(16 * unit) || !Number.isInteger(24 * unit))) throw new UsageError(`--unit-ms ${unit} is not a whole number of samples at 16 and 24 kHz`);
  const profile = f.profile as MockProfile;
  if (f.protocol === 'native' && profile === 'model') throw new UsageError('--profile model is for --protocol openai; the native profiles are append-echo, nemotron and minicpmo');
  if (f.protocol === 'native' && f['replies-per-append'] < 2) throw new UsageError('--replies-per-append must be at least 2 for the native dialect (an audio delta and sglang.unit.done per unit)');
  const given = <T>(v: T | undefined, key: string) => (v === undefined ? {} : { [key]: v });
  return {
    protocol: f.protocol as ServeOptions['protocol'],
    unit_ms: unit,
    openai: {
      names: f['event-names'] as 'ga' | 'beta',
      vllm: f['vllm-extensions'],
      silence_ms: f['vad-silence-ms'],
      flavor: f.flavor as 'openai' | 'vllm-omni',
      listen_every: f['listen-every'],
      disconnect_grace_ms: f['disconnect-grace-s'] * 1000,
    },
    tls: f['tls-cert'] !== undefined && f['tls-key'] !== undefined ? { cert: f['tls-cert'], key: f['tls-key'] } : undefined,
    profile,
    model: {
      ...given(f['ttfp-ms'], 'ttfp_ms'),
      ...given(f.rtf, 'rtf'),
      ...given(f['burst-units'], 'burst_units'),
      ...given(f['turn-every-s'], 'turn_every_s'),
      ...given(f['tokens-per-step'] || undefined, 'tokens_per_step'),
    },
    host: f.host,
    port: f.port,
    replies_per_append: f['replies-per-append'],
    output_sample_rate: f['output-sample-rate'],
    max_sessions: f['max-sessions'],
    stats_output: f['stats-output'],
  };
}
