import { UsageError } from '@duplex-bench/cli';
import type { TurnDetection } from '@duplex-bench/protocol';
import { checkPacket, CHILD_KEY_ENV, DEFAULT_PACKET_MS, DEFAULT_UNIT_TIMEOUT_MS, type DialectOptions } from '@duplex-bench/session';

/** Flags that choose and configure the wire dialect; `run` and `record` share them. */
export const DIALECT_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai', 'vllm-omni'], default: 'native', group: 'dialect', help: "the server's dialect: native (sglang-omni duplex), openai (OpenAI Realtime, GA names) or vllm-omni (vLLM-Omni's duplex flow)" },
  model: { kind: 'string', group: 'dialect', help: 'vllm-omni: the model named in the URL and in session.update', value: 'NAME' },
  'no-playback-ack': { kind: 'bool', group: 'testing', help: 'vllm-omni: never acknowledge playback (an ack-only server then holds its turns)' },
  'api-key': { kind: 'string', group: 'connection', help: 'bearer key sent on the upgrade (default: OPENAI_API_KEY with openai); redacted everywhere', value: 'KEY' },
  'turn-detection': { kind: 'enum', values: ['server_vad', 'none'], group: 'dialect', help: 'openai and vllm-omni: server_vad or none (default: server_vad; vllm-omni: none)' },
  'commit-every-s': { kind: 'number', min: 0, exclusive: true, group: 'dialect', help: 'with --turn-detection none: commit (openai: and ask for a response) after this much input, seconds (default: 1; vllm-omni: once, at the end)', value: 'S' },
  'sample-rate': { kind: 'int', min: 1, default: 16000, group: 'input', help: 'input PCM16 rate, Hz (native takes 16000 only)', value: 'HZ' },
  pacing: {
    kind: 'enum',
    values: ['realtime', 'lockstep'],
    group: 'load',
    help: "native: realtime (packets on the absolute schedule) or lockstep (each unit of the grant's native_unit_ms sent once the server's sglang.unit.done for the previous one came: the server's pace, reported as units/s; no pacing verdict) (default: realtime)",
  },
  'unit-timeout-s': { kind: 'number', min: 0, exclusive: true, group: 'limits', help: `with --pacing lockstep: bound on each wait for a unit's sglang.unit.done, seconds (default: ${DEFAULT_UNIT_TIMEOUT_MS / 1000})`, value: 'S' },
  'packet-ms': { kind: 'number', min: 0, exclusive: true, group: 'input', help: "packet length, ms (default: 80; openai: the server's chunk_period_ms when it announces one)", value: 'MS' },
} as const;

interface DialectFlagValues {
  protocol: string;
  model?: string;
  'no-playback-ack'?: boolean;
  'api-key'?: string;
  'turn-detection'?: string;
  'commit-every-s'?: number;
  'sample-rate': number;
  'packet-ms'?: number;
  pacing?: string;
  'unit-timeout-s'?: number;
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
  if (f.pacing !== undefined && protocol !== 'native') throw new UsageError('--pacing is for --protocol native (sglang-omni units)');
  if (f['unit-timeout-s'] !== undefined && f.pacing !== 'lockstep') throw new UsageError('--unit-timeout-s is for --pacing lockstep');
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
    ...(f.pacing === 'lockstep' ? { pacing: 'lockstep' as const, unit_timeout_ms: (f['unit-timeout-s'] ?? DEFAULT_UNIT_TIMEOUT_MS / 1000) * 1000 } : {}),
  };
}

