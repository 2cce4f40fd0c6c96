import { UsageError } from '@duplex-bench/cli';
import { vllmRealtimeUrl, type TurnDetection } from '@duplex-bench/protocol';
import type { DialectConfig } from '@duplex-bench/transport';

/** Flags that choose and configure the wire dialect; `run` and `record` share them. */
export const DIALECT_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai', 'vllm-omni'], default: 'native', group: 'dialect', help: "the server's dialect: native (sglang-omni duplex), openai (OpenAI Realtime, GA names) or vllm-omni (vLLM-Omni's duplex flow)" },
  model: { kind: 'string', group: 'dialect', help: 'vllm-omni: the model named in the URL and in session.update', value: 'NAME' },
  'no-playback-ack': { kind: 'bool', group: 'testing', help: 'vllm-omni: never acknowledge playback (an ack-only server then holds its turns)' },
  'api-key': { kind: 'string', group: 'connection', help: 'bearer key sent on the upgrade (default: OPENAI_API_KEY with openai); redacted everywhere', value: 'KEY' },
  'turn-detection': { kind: 'enum', values: ['server_vad', 'none'], group: 'dialect', help: 'openai and vllm-omni: server_vad or none (default: server_vad; vllm-omni: none)' },
  'commit-every-s': { kind: 'number', min: 0, exclusive: true, group: 'dialect', help: 'with --turn-detection none: commit (openai: and ask for a response) after this much input, seconds (default: 1; vllm-omni: once, at the end)', value: 'S' },
  'sample-rate': { kind: 'int', min: 1, default: 16000, group: 'input', help: 'input PCM16 rate, Hz (native takes 16000 only)', value: 'HZ' },
  'packet-ms': { kind: 'number', min: 0, exclusive: true, group: 'input', help: "packet length, ms (default: 80; openai: the server's chunk_period_ms when it announces one)", value: 'MS' },
} as const;

export const DEFAULT_PACKET_MS = 80;

/** How a launched child gets the key: its environment, never its command line. */
export const CHILD_KEY_ENV = 'DUPLEX_BENCH_API_KEY';

export interface DialectOptions {
  protocol: 'native' | 'openai' | 'vllm-omni';
  /** vllm-omni: the model named in the URL and in session.update. */
  model?: string;
  /** vllm-omni without --commit-every-s: one commit, at the end (the model decides its own turns). */
  commit_given: boolean;
  /** vllm-omni, a test flag: never acknowledge playback (an ack-only server then holds its turns). */
  no_playback_ack: boolean;
  /** Bearer key for the upgrade request. Never written to run.json, traces or logs. */
  api_key?: string;
  turn_detection: TurnDetection;
  commit_every_s: number;
  sample_rate: number;
  packet_ms: number;
  /** False when `--packet-ms` was not given: an openai server's `chunk_period_ms` may then set it. */
  packet_ms_given: boolean;
}

interface DialectFlagValues {
  protocol: string;
  model?: string;
  'no-playback-ack'?: boolean;
  'api-key'?: string;
  'turn-detection'?: string;
  'commit-every-s'?: number;
  'sample-rate': number;
  'packet-ms'?: number;
}

/** Validates the dialect flags; `env` supplies `OPENAI_API_KEY` for the openai dialect. */
export function parseDialectOptions(f: DialectFlagValues, env: NodeJS.ProcessEnv = process.env): DialectOptions {
  const protocol = f.protocol as DialectOptions['protocol'];
  if (protocol === 'native') {
    if (f['turn-detection'] !== undefined || f['commit-every-s'] !== undefined) {
      throw new UsageError('--turn-detection and --commit-every-s are for --protocol openai');
    }
    if (f['sample-rate'] !== 16000) throw new UsageError('--sample-rate must be 16000 for the native dialect');
  }
  if (f.model !== undefined && protocol !== 'vllm-omni') throw new UsageError('--model is for --protocol vllm-omni');
  if (f['no-playback-ack'] && protocol !== 'vllm-omni') throw new UsageError('--no-playback-ack is for --protocol vllm-omni');
  // vLLM-Omni's client sends turn_detection null by default: the model decides its own turns.
  const turn_detection = (f['turn-detection'] ?? (protocol === 'vllm-omni' ? 'none' : 'server_vad')) as TurnDetection;
  if (f['commit-every-s'] !== undefined && turn_detection !== 'none') {
    throw new UsageError('--commit-every-s needs --turn-detection none (with server_vad the server finds the turns)');
  }
  const packet_ms = f['packet-ms'] ?? DEFAULT_PACKET_MS;
  checkPacket(packet_ms, f['sample-rate']);
  const api_key = f['api-key'] ?? (env[CHILD_KEY_ENV] || undefined) ?? (protocol === 'openai' ? env.OPENAI_API_KEY || undefined : undefined);
  if (api_key !== undefined && !/^[\x21-\x7e]+$/.test(api_key)) throw new UsageError('--api-key must be printable ASCII without spaces');
  return {
    protocol,
    ...(f.model !== undefined ? { model: f.model } : {}),
    api_key,
    turn_detection,
    commit_every_s: f['commit-every-s'] ?? 1,
    commit_given: f['commit-every-s'] !== undefined,
    no_playback_ack: f['no-playback-ack'] === true,
    sample_rate: f['sample-rate'],
    packet_ms,
    packet_ms_given: f['packet-ms'] !== undefined,
  };
}

/** A packet must hold a whole number of samples. */
export function checkPacket(packet_ms: number, sample_rate: number): void {
  if (!Number.isInteger((sample_rate * packet_ms) / 1000)) {
    throw new UsageError(`--packet-ms ${packet_ms} is not a whole number of samples at ${sample_rate} Hz`);
  }
}

/** The session flow's configuration once the packet size is known. */
export function dialectConfig(o: DialectOptions, packet_ms: number, output_sample_rate?: number): DialectConfig {
  if (o.protocol === 'native') return { protocol: 'native' };
  const every = Math.max(1, Math.round((o.commit_every_s * 1000) / packet_ms));
  if (o.protocol === 'vllm-omni') {
    return {
      protocol: 'vllm-omni',
      model: o.model,
      turn_detection: o.turn_detection,
      commit_every_packets: o.commit_given ? every : Infinity,
      output_sample_rate,
      ...(o.no_playback_ack ? { no_playback_ack: true } : {}),
    };
  }
  return {
    protocol: 'openai',
    turn_detection: o.turn_detection,
    commit_every_packets: every,
    output_sample_rate,
  };
}

/** The URL sessions connect to: vLLM-Omni's client adds `duplex=1`, `model` and `autostart=0`. */
export function sessionUrl(o: DialectOptions, url: string): string {
  return o.protocol === 'vllm-omni' ? vllmRealtimeUrl(url, o.model) : url;
}

/** Upgrade request headers: the bearer key, when there is one. */
export function authHeaders(o: DialectOptions): Record<string, string> | undefined {
  return o.api_key ? { Authorization: `Bearer ${o.api_key}` } : undefined;
}

const SECRET_FLAGS = ['--api-key'];

/** The command line with secret values replaced, for run.json and messages. */
export function redactArgv(argv: string[]): string[] {
  return rewriteSecrets(argv, (flag, joined) => (joined ? [`${flag}=[redacted]`] : [flag, '[redacted]']));
}

/** The command line without secret flags (a launched child gets the key through its environment). */
export function withoutSecrets(argv: string[]): string[] {
  return rewriteSecrets(argv, () => []);
}

/** `argv` with each secret flag and its value replaced by `by(flag, written as --flag=value)`. */
function rewriteSecrets(argv: string[], by: (flag: string, joined: boolean) => string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const flag = SECRET_FLAGS.find((f) => arg === f || arg.startsWith(`${f}=`));
    if (!flag) {
      out.push(arg);
      continue;
    }
    if (arg === flag) i++;
    out.push(...by(flag, arg !== flag));
  }
  return out;
}

/** The dialect settings run.json records (the key only as whether one was sent). */
export function dialectRecord(o: DialectOptions & { output_sample_rate: number }) {
  return {
    protocol: o.protocol,
    input_sample_rate: o.sample_rate,
    output_sample_rate_assumed: o.output_sample_rate,
    ...(o.protocol !== 'native' ? { turn_detection: o.turn_detection, ...(o.turn_detection === 'none' ? { commit_every_s: o.commit_given || o.protocol === 'openai' ? o.commit_every_s : 'end of input only' } : {}) } : {}),
    ...(o.model !== undefined ? { model: o.model } : {}),
    bearer_key_sent: o.api_key !== undefined,
  };
}
