import { UsageError } from '@duplex-bench/launcher';
import { dialectConfig, parseDialectOptions, redactArgv, withoutSecrets } from './dialect-options';

const flags = (f: Record<string, unknown> = {}) => ({ protocol: 'openai', 'sample-rate': 16000, ...f });

describe('dialect options', () => {
  it('takes the key from --api-key, else from OPENAI_API_KEY for the openai dialect only', () => {
    expect(parseDialectOptions(flags({ 'api-key': 'k1' }), { OPENAI_API_KEY: 'k2' }).api_key).toBe('k1');
    expect(parseDialectOptions(flags(), { OPENAI_API_KEY: 'k2' }).api_key).toBe('k2');
    expect(parseDialectOptions(flags({ protocol: 'native' }), { OPENAI_API_KEY: 'k2' }).api_key).toBeUndefined();
    expect(parseDialectOptions(flags(), { OPENAI_API_KEY: '' }).api_key).toBeUndefined();
  });

  it('refuses openai-only flags and other rates with the native dialect, and a commit period with server VAD', () => {
    const refuse = (f: Record<string, unknown>) => expect(() => parseDialectOptions(flags(f), {})).toThrow(UsageError);
    refuse({ protocol: 'native', 'turn-detection': 'none' });
    refuse({ protocol: 'native', 'sample-rate': 24000 });
    refuse({ 'commit-every-s': 1 });
    refuse({ 'api-key': 'has space' });
    expect(parseDialectOptions(flags({ 'sample-rate': 24000, 'turn-detection': 'none', 'commit-every-s': 2 }), {})).toMatchObject({
      sample_rate: 24000,
      turn_detection: 'none',
      commit_every_s: 2,
      packet_ms_given: false,
    });
  });

  it('turns the commit period into whole packets, at least one', () => {
    const o = parseDialectOptions(flags({ 'turn-detection': 'none', 'commit-every-s': 1 }), {});
    expect(dialectConfig(o, 80)).toMatchObject({ protocol: 'openai', turn_detection: 'none', commit_every_packets: 13 });
    expect(dialectConfig({ ...o, commit_every_s: 0.01 }, 80)).toMatchObject({ commit_every_packets: 1 });
  });

  it('redacts the key in both flag spellings, and leaves it out of a child command line', () => {
    const argv = ['--url', 'ws://x', '--api-key', 's3cret', '--api-key=s3cret2', '--quiet'];
    expect(redactArgv(argv)).toEqual(['--url', 'ws://x', '--api-key', '[redacted]', '--api-key=[redacted]', '--quiet']);
    expect(withoutSecrets(argv)).toEqual(['--url', 'ws://x', '--quiet']);
  });
});
