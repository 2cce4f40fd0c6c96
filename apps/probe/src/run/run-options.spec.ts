import { UsageError } from '@duplex-bench/cli';
import { parseRunOptions } from './run-options';

const BASE = ['--url', 'ws://127.0.0.1:8765/v1/realtime', '--concurrency', '64', '--duration', '30', '--output', 'out/r'];

function usageError(argv: string[]): string {
  try {
    parseRunOptions(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

const withFlag = (name: string, value: string) => {
  const argv = [...BASE];
  const i = argv.indexOf(name);
  if (i >= 0) argv[i + 1] = value;
  else argv.push(name, value);
  return argv;
};

describe('parseRunOptions', () => {
  it('takes the documented defaults', () => {
    expect(parseRunOptions(BASE)).toMatchObject({
      concurrency: 64,
      duration_s: 30,
      packet_ms: 80,
      // 64 sessions: 2 ms each (128 ms) is longer than one packet.
      start_spread_ms: 128,
      trace: 'off',
      connect_timeout_ms: 10_000,
      allow_unqualified: false,
    });
  });

  it.each([
    ['--concurrency', '0', '--concurrency must be at least 1, got 0'],
    ['--concurrency', '2.5', '--concurrency must be a whole number, got "2.5"'],
    ['--duration', '-1', '--duration must be greater than 0, got -1'],
    ['--duration', 'ten', '--duration must be a number, got "ten"'],
    ['--protocol', 'grpc', '--protocol must be one of native|openai|vllm-omni, got "grpc"'],
    ['--url', 'http://127.0.0.1:8765/v1/realtime', '--url must start with ws:// or wss://, got "http://127.0.0.1:8765/v1/realtime"'],
    ['--url', 'not a url', '--url is not a URL: "not a url"'],
    ['--trace', 'some', '--trace must be one of full|events|off, got "some"'],
    ['--packet-ms', '0.01', '--packet-ms 0.01 is not a whole number of samples at 16000 Hz'],
  ])('refuses %s %s in one line', (flag, value, message) => {
    const text = usageError(withFlag(flag, value));
    expect(text).toBe(message);
    expect(text).not.toContain('\n');
  });

  it('spreads starts over one packet, or 2 ms per session when that is longer', () => {
    expect(parseRunOptions(withFlag('--concurrency', '16')).start_spread_ms).toBe(80);
    expect(parseRunOptions(withFlag('--concurrency', '512')).start_spread_ms).toBe(1024);
    expect(parseRunOptions([...withFlag('--concurrency', '512'), '--start-spread-ms', '0']).start_spread_ms).toBe(0);
  });

  it('names a missing required flag and an unknown one', () => {
    expect(usageError(BASE.slice(2))).toBe('--url is required');
    expect(usageError([...BASE.slice(0, 2), ...BASE.slice(4)])).toBe('--concurrency is required');
    expect(usageError([...BASE, '--sessions', '4'])).toBe('unknown flag --sessions');
    expect(usageError([...BASE, '--quiet=yes'])).toBe('--quiet takes no value');
  });

  it('accepts --flag=value and negative-looking values only where numbers are expected', () => {
    expect(parseRunOptions([...BASE, '--warmup-s=5']).warmup_s).toBe(5);
    expect(usageError(withFlag('--duration', '--5'))).toBe('--duration must be a number, got "--5"');
  });
});
