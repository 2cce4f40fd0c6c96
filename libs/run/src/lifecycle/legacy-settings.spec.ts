import { UsageError } from '@duplex-bench/cli';
import { legacyFigures } from '@duplex-bench/results';
import { dialectConfig, dialectRecord } from '../dialect-options';
import { parseDialectOptions } from './dialect-settings';

const profile = (f: Record<string, unknown> = {}) => ({ protocol: 'native', profile: 'qwen3-omni-half-duplex', ...f });

describe('run --profile qwen3-omni-half-duplex (sglang-omni legacy protocol)', () => {
  it("sets the dialect and what their client fixes: 16 kHz in 80 ms packets, server_vad by default, their admission budget, a 1 s tail", () => {
    const o = parseDialectOptions(profile(), {});
    expect(o).toMatchObject({ protocol: 'sglang-legacy', turn_detection: 'server_vad', sample_rate: 16000, packet_ms: 80, packet_ms_given: false, close_timeout_ms: 5000 });
    expect(o.admission).toEqual({ retries: 3, backoff_ms: 250, max_backoff_ms: 250 });
    expect(dialectConfig(o, 80)).toEqual({ protocol: 'sglang-legacy', turn_detection: 'server_vad', tail_ms: 1000 });
    expect(dialectConfig(parseDialectOptions(profile({ 'turn-detection': 'semantic_vad' }), {}), 80)).toMatchObject({ turn_detection: 'semantic_vad' });
    expect(parseDialectOptions(profile({ 'packet-ms': 20 }), {})).toMatchObject({ packet_ms: 20, packet_ms_given: true });
  });

  it("records the profile (its 20 ms unit and 24 kHz output) and the turn detection in run.json's dialect", () => {
    const record = dialectRecord({ ...parseDialectOptions(profile(), {}), output_sample_rate: 24000 });
    expect(record).toMatchObject({ protocol: 'sglang-legacy', turn_detection: 'server_vad', max_admission_attempts: 3, profile: { name: 'qwen3-omni-half-duplex', native_unit_ms: 20, output_sample_rate: 24000 } });
  });

  it('refuses what the legacy protocol does not take, as one usage line', () => {
    const refuse = (f: Record<string, unknown>, message: RegExp) => {
      expect(() => parseDialectOptions(profile(f), {})).toThrow(UsageError);
      expect(() => parseDialectOptions(profile(f), {})).toThrow(message);
    };
    refuse({ protocol: 'openai' }, /leave out --protocol/);
    refuse({ 'turn-detection': 'none' }, /server_vad or semantic_vad/);
    refuse({ 'commit-every-s': 1 }, /--commit-every-s is not for --profile/);
    refuse({ pacing: 'lockstep' }, /--pacing is not for --profile/);
    refuse({ model: 'm' }, /--model is not for --profile/);
    refuse({ 'sample-rate': 24000 }, /--sample-rate must be 16000/);
    refuse({ profile: 'nemotron' }, /--profile must be one of qwen3-omni-half-duplex/);
  });

  it("pools the oracle's legacy figures over the sessions into the summary's legacy block", () => {
    const block = legacyFigures([
      { dialect_events: { responses_created: 2, responses_overlapped_by_speech: 1, responses_open_at_close: 0, probe_ack_ms: 4 } },
      { dialect_events: { responses_created: 1, responses_overlapped_by_speech: 0, responses_open_at_close: 1 } },
      {},
    ]);
    expect(block).toMatchObject({ sessions: 2, responses_created: 3, responses_overlapped_by_speech: 1, responses_open_at_close: 1, probe_ack_s: { count: 1, mean: 0.004, p50: 0.004, p99: 0.004 } });
    expect(legacyFigures([{}])).toBeNull();
  });
});
