import { UsageError } from '@duplex-bench/cli';
import { RECORD_CONVERSATION_DURATION_S } from './record-flags';
import { parseRecordOptions } from './record-options';

const BASE = ['--url', 'ws://127.0.0.1:8765/v1/realtime', '--concurrency', '2', '--output', 'out/rec'];

function usageError(argv: string[]): string {
  try {
    parseRecordOptions(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

describe('parseRecordOptions with --conversation', () => {
  it('without --url, records against the built-in mock (its profile with --mock-profile); --mock-profile beside --url is a usage error', () => {
    expect(parseRecordOptions(BASE.slice(2)).builtin_mock).toEqual({});
    expect(parseRecordOptions([...BASE.slice(2), '--mock-profile', 'minicpmo']).builtin_mock).toEqual({ mock_profile: 'minicpmo' });
    expect(parseRecordOptions(BASE).builtin_mock).toBeUndefined();
    expect(usageError([...BASE, '--mock-profile', 'nemotron'])).toBe('--mock-profile is for a recording without --url (the built-in mock)');
  });

  it('takes a conversation, its length (60 s unless given) and the bounds of its figures', () => {
    expect(parseRecordOptions([...BASE, '--conversation', 'default'])).toMatchObject({ conversation: 'default', duration_s: RECORD_CONVERSATION_DURATION_S, max_stop_s: 3, takeover_min_ms: 500 });
    expect(RECORD_CONVERSATION_DURATION_S).toBe(60);
    expect(parseRecordOptions([...BASE, '--conversation', 'default', '--duration', '20', '--max-stop-s', '2', '--takeover-min-ms', '800'])).toMatchObject({ duration_s: 20, max_stop_s: 2, takeover_min_ms: 800 });
  });

  it('refuses --duration without --conversation, and --conversation with --dataset', () => {
    expect(usageError([...BASE, '--duration', '20'])).toMatch(/^--duration .* goes with --conversation/);
    expect(usageError([...BASE, '--conversation', 'default', '--dataset', 'wavs'])).toBe('--conversation and --dataset are two inputs: give one');
  });
});

describe('parseRecordOptions with --profile (sglang-omni legacy protocol, as run takes it)', () => {
  it('sets the legacy dialect as run does: 16 kHz in 80 ms packets, server_vad unless semantic_vad, 24 kHz output', () => {
    expect(parseRecordOptions([...BASE, '--profile', 'qwen3-omni-half-duplex'])).toMatchObject({ protocol: 'sglang-legacy', turn_detection: 'server_vad', sample_rate: 16000, packet_ms: 80, output_sample_rate: 24000 });
    expect(parseRecordOptions([...BASE, '--profile', 'qwen3-omni-half-duplex', '--turn-detection', 'semantic_vad'])).toMatchObject({ turn_detection: 'semantic_vad' });
  });

  it("refuses what the legacy protocol does not take, with run's messages", () => {
    expect(usageError([...BASE, '--profile', 'qwen3-omni-half-duplex', '--protocol', 'openai'])).toMatch(/leave out --protocol/);
    expect(usageError([...BASE, '--profile', 'qwen3-omni-half-duplex', '--turn-detection', 'none'])).toMatch(/server_vad or semantic_vad/);
    expect(usageError([...BASE, '--profile', 'nemotron'])).toMatch(/qwen3-omni-half-duplex/);
  });
});
