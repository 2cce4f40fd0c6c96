import { parseFlags, UsageError } from '@duplex-bench/cli';
import type { MockProfile } from './mock-server';
import type { ModelOptions } from './model-session';

export const SERVE_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai'], default: 'native', group: 'dialect', help: 'native (sglang-omni duplex) or openai (OpenAI Realtime)' },
  profile: { kind: 'enum', values: ['append-echo', 'nemotron', 'minicpmo', 'model'], default: 'append-echo', group: 'model', help: 'append-echo (answers every packet), nemotron, minicpmo (native model profiles) or model (openai)' },
  host: { kind: 'string', default: '127.0.0.1', group: 'connection', help: 'address to listen on', value: 'HOST' },
  port: { kind: 'int', min: 0, default: 8765, group: 'connection', help: 'port to listen on (0: any free port)', value: 'PORT' },
  'replies-per-append': { kind: 'int', min: 1, default: 3, group: 'model', help: 'append-echo: frames answered per packet', value: 'N' },
  'output-sample-rate': { kind: 'int', min: 1, group: 'model', help: "output audio rate, Hz (default: the profile's; 22050 native, 24000 minicpmo and openai)", value: 'HZ' },
  'burst-units': { kind: 'int', min: 1, group: 'model', help: 'output units sent together once that many are produced (or the turn ends)', value: 'N' },
  'ttfp-ms': { kind: 'number', min: 0, group: 'model', help: "delay from a turn's start to its first audio, ms", value: 'MS' },
  rtf: { kind: 'number', min: 0, exclusive: true, group: 'model', help: 'real-time factor of generation: a unit takes unit-ms x rtf to produce', value: 'X' },
  'turn-every-s': { kind: 'number', min: 0, exclusive: true, group: 'model', help: 'a new model turn starts every this many seconds of input', value: 'S' },
  'tokens-per-step': { kind: 'int', min: 0, default: 0, group: 'model', help: 'tokens each transcript delta reports (sglang.num_tokens; 0: none)', value: 'N' },
  'capacity-sessions': {
    kind: 'int',
    min: 1,
    group: 'model',
    help: 'model profiles: past this many active sessions the model shares a fixed compute (real-time factor and TTFP grow as active/N), so a sweep has a knee to find',
    value: 'N',
  },
  'max-sessions': { kind: 'int', min: 1, group: 'limits', help: 'refuse the upgrade (HTTP 503) past this many open sessions', value: 'N' },
  'stats-output': { kind: 'string', group: 'output', help: "write the mock's stats (arrival deviation, loop lag, CPU) as JSON here on exit", value: 'FILE' },
  'unit-ms': { kind: 'number', min: 0, exclusive: true, group: 'model', help: "output unit, ms (default: the profile's; openai 80)", value: 'MS' },
  'event-names': { kind: 'enum', values: ['ga', 'beta'], default: 'ga', group: 'dialect', help: 'openai: ga or beta event names' },
  'vllm-extensions': { kind: 'bool', group: 'dialect', help: "openai: add vLLM-Omni's extensions (chunk_period_ms, server_event_seq, request metrics)" },
  'vad-silence-ms': { kind: 'number', min: 0, exclusive: true, default: 500, group: 'model', help: 'openai: server VAD ends a turn after this much silence, ms', value: 'MS' },
  flavor: { kind: 'enum', values: ['openai', 'vllm-omni'], default: 'openai', group: 'dialect', help: "openai: behave as OpenAI Realtime (openai) or as vLLM-Omni's duplex server (vllm-omni)" },
  'listen-every': { kind: 'int', min: 0, default: 0, group: 'model', help: 'vllm-omni flavour: every Nth turn the model keeps listening (0: never)', value: 'N' },
  'disconnect-grace-s': { kind: 'number', min: 0, default: 30, group: 'limits', help: "vllm-omni flavour: how long a dropped session's slot is held, seconds", value: 'S' },
  'tls-cert': { kind: 'string', group: 'connection', help: 'serve wss:// with this PEM certificate (with --tls-key)', value: 'FILE' },
  'tls-key': { kind: 'string', group: 'connection', help: 'the PEM key of --tls-cert', value: 'FILE' },
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
  capacity_sessions?: number;
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
  if (f['capacity-sessions'] !== undefined && profile === 'append-echo') throw new UsageError('--capacity-sessions is for a model profile (nemotron, minicpmo, model)');
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
    capacity_sessions: f['capacity-sessions'],
    stats_output: f['stats-output'],
  };
}
