import { UsageError } from '@duplex-bench/cli';
import { LEGACY_PROFILES, type LegacyProfileName } from '@duplex-bench/protocol';
import { NATIVE_ADMISSION } from '@duplex-bench/session';
import { checkPacket, CHILD_KEY_ENV, type DialectOptions } from '../dialect-options';
import { RunInputError } from '../input-error';
import type { DialectFlagValues } from './dialect-settings';

/** Flags of the other dialects, which a legacy profile does not take. */
const NOT_LEGACY = ['commit-every-s', 'pacing', 'unit-timeout-s', 'model', 'no-playback-ack', 'ref-audio', 'session-extra'] as const;

/**
 * `--profile NAME`: a model sglang-omni serves over its legacy (turn-based) protocol. The profile
 * chooses the dialect and what their client fixes for it: 16 kHz input in 80 ms packets (their
 * client's `SAMPLE_RATE` and `PACKET_MS`, the same for every profile; `--packet-ms` still changes
 * it), 24 kHz output (profiles.py `output_sample_rate`), server_vad unless `--turn-detection
 * semantic_vad`, and their admission budget (3 retries, 0.25 s apart). The profile's 20 ms unit is
 * the model's: neither their client nor their oracle reads it on this path; run.json records it.
 */
export function parseLegacyProfileOptions(f: DialectFlagValues, env: NodeJS.ProcessEnv): DialectOptions {
  const name = f.profile as LegacyProfileName;
  const profile = LEGACY_PROFILES[name];
  if (!profile) throw new UsageError(`--profile must be one of ${Object.keys(LEGACY_PROFILES).join(', ')}, got "${f.profile}"`);
  // --protocol has a default, so only a dialect other than it can be told from the flags.
  if (f.protocol !== 'native') throw new UsageError(`--profile ${name} speaks sglang-omni's legacy protocol: leave out --protocol`);
  const other = NOT_LEGACY.find((k) => f[k] !== undefined && f[k] !== false);
  if (other) throw new UsageError(`--${other} is not for --profile ${name}`);
  const turn_detection = f['turn-detection'] ?? 'server_vad';
  if (turn_detection !== 'server_vad' && turn_detection !== 'semantic_vad') throw new UsageError(`--profile ${name} takes --turn-detection server_vad or semantic_vad (the server finds the turns), got ${turn_detection}`);
  if (f['sample-rate'] !== undefined && f['sample-rate'] !== profile.input_sample_rate) throw new UsageError(`--sample-rate must be ${profile.input_sample_rate} for --profile ${name}`);
  const packet_ms = f['packet-ms'] ?? profile.packet_ms;
  try {
    checkPacket(packet_ms, profile.input_sample_rate);
  } catch (err) {
    throw err instanceof RunInputError ? new UsageError(err.message, { cause: err }) : err;
  }
  const api_key = f['api-key'] ?? (env[CHILD_KEY_ENV] || undefined);
  if (api_key !== undefined && !/^[\x21-\x7e]+$/.test(api_key)) throw new UsageError('--api-key must be printable ASCII without spaces');
  const backoff_ms = f['admission-backoff-ms'] ?? NATIVE_ADMISSION.backoff_ms;
  return {
    protocol: 'sglang-legacy',
    api_key,
    turn_detection,
    commit_every_s: 1,
    commit_given: false,
    no_playback_ack: false,
    sample_rate: profile.input_sample_rate,
    packet_ms,
    packet_ms_given: f['packet-ms'] !== undefined,
    admission: { retries: f['admission-retries'] ?? NATIVE_ADMISSION.retries, backoff_ms, max_backoff_ms: backoff_ms },
    ...(f['handshake-timeout-s'] !== undefined ? { handshake_timeout_ms: f['handshake-timeout-s'] * 1000 } : {}),
    close_timeout_ms: f['close-timeout-s'] !== undefined ? f['close-timeout-s'] * 1000 : 5000,
  };
}
