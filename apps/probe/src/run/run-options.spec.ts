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

  it("refuses a session past sglang-omni's 230 s cap before the run, unless --max-session-s allows it; other dialects have no cap unless given", () => {
    const url = ['--url', 'ws://127.0.0.1:1/v1/realtime', '--concurrency', '1', '--output', '/tmp/out'];
    expect(() => parseRunOptions([...url, '--duration', '231'])).toThrow(/a 231 s session passes the server's session limit of 230 s \(sglang-omni ends a session at 240 s.*give --max-session-s/);
    expect(parseRunOptions([...url, '--duration', '230']).duration_s).toBe(230);
    expect(parseRunOptions([...url, '--duration', '300', '--max-session-s', '600']).duration_s).toBe(300);
    expect(parseRunOptions([...url, '--duration', '300', '--protocol', 'vllm-omni']).duration_s).toBe(300);
    expect(() => parseRunOptions([...url, '--duration', '300', '--protocol', 'vllm-omni', '--max-session-s', '120'])).toThrow("a 300 s session passes the server's session limit of 120 s; give --max-session-s for a server that allows more");
  });

  it("reads --slo as the sweep does; a term that does not read, or --slo with --processes, is a usage error naming it", () => {
    expect(parseRunOptions([...BASE, '--slo', 'ttfp_p99_ms<=1000,incomplete=0']).slo).toEqual([
      { figure: 'ttfp_p99_ms', op: '<=', bound: 1000, text: 'ttfp_p99_ms<=1000' },
      { figure: 'incomplete', op: '=', bound: 0, text: 'incomplete=0' },
    ]);
    expect(parseRunOptions(BASE).slo).toBeUndefined();
    expect(usageError([...BASE, '--slo', 'ttfp<=3'])).toMatch(/^--slo: unknown figure "ttfp"; the figures are ttfp_p99_ms, /);
    expect(usageError([...BASE, '--slo', 'ttfp_p99_ms<<3'])).toBe('--slo: cannot read "ttfp_p99_ms<<3" (figure<=number, joined by commas)');
    // Over processes, the launcher judges the pooled summary.
    expect(parseRunOptions([...BASE, '--slo', 'incomplete=0', '--processes', '2']).slo).toHaveLength(1);
    expect(usageError([...BASE, '--slo', 'incomplete=0', '--processes', '2', '--abort-on-fail'])).toMatch(/^--abort-on-fail watches one process/);
  });

  it('scrapes the server from shard 0 only: a sharded run has one scraper', () => {
    const scrape = ['--server-metrics', 'http://127.0.0.1:9/metrics'];
    expect(parseRunOptions([...BASE, ...scrape, '--shard', '0/2']).server_metrics?.urls).toEqual(['http://127.0.0.1:9/metrics']);
    expect(parseRunOptions([...BASE, ...scrape, '--shard', '1/2']).server_metrics).toBeNull();
  });

  it('refuses --dashboard-port with --processes: the dashboard draws one process', () => {
    expect(usageError([...BASE, '--dashboard-port', '0', '--processes', '2'])).toMatch(/^--dashboard-port draws one process/);
    expect(parseRunOptions([...BASE, '--dashboard-port', '0']).dashboard).toEqual({ port: 0, linger_s: 30 });
  });

  it('takes --abort-on-fail only with --slo terms it can judge live, and --abort-grace-s (10 s by default)', () => {
    expect(parseRunOptions([...BASE, '--slo', 'ttfp_p99_ms<=100', '--abort-on-fail']).abort_on_fail).toEqual({ grace_s: 10 });
    expect(parseRunOptions([...BASE, '--slo', 'incomplete=0', '--abort-on-fail', '--abort-grace-s', '3']).abort_on_fail).toEqual({ grace_s: 3 });
    expect(parseRunOptions([...BASE, '--slo', 'ttfp_p99_ms<=100']).abort_on_fail).toBeUndefined();
    expect(usageError([...BASE, '--abort-on-fail'])).toBe('--abort-on-fail ends a run on its --slo terms: give --slo');
    expect(usageError([...BASE, '--slo', 'underruns=0', '--abort-on-fail'])).toMatch(/^--abort-on-fail: none of the --slo terms can be judged before the end/);
  });

  it('without --url, serves the built-in mock (with --mock-profile, if given); --mock-profile beside --url is a usage error', () => {
    expect(parseRunOptions(BASE.slice(2)).builtin_mock).toEqual({});
    expect(parseRunOptions([...BASE.slice(2), '--mock-profile', 'nemotron']).builtin_mock).toEqual({ mock_profile: 'nemotron' });
    expect(parseRunOptions(BASE).builtin_mock).toBeUndefined();
    expect(usageError([...BASE, '--mock-profile', 'nemotron'])).toBe('--mock-profile is for a run without --url (the built-in mock)');
  });

  it('names a missing required flag and an unknown one', () => {
    expect(usageError([...BASE.slice(0, 2), ...BASE.slice(4)])).toBe('--concurrency is required');
    expect(usageError([...BASE, '--sessions', '4'])).toBe('unknown flag --sessions');
    expect(usageError([...BASE, '--quiet=yes'])).toBe('--quiet takes no value');
  });

  it('plays a conversation once in each session without --duration; any other run still needs --duration', () => {
    const noDuration = BASE.filter((_, i) => i !== BASE.indexOf('--duration') && i !== BASE.indexOf('--duration') + 1);
    // The length is the script's: 0 until the script is read (runSessions sets one pass's bound).
    expect(parseRunOptions([...noDuration, '--conversation', 'default'])).toMatchObject({ conversation: 'default', conversation_once: true, duration_s: 0 });
    expect(parseRunOptions([...noDuration, '--conversation', 'default', '--processes', '2']).conversation_once).toBe(true);
    // With --duration, as before: the script for that long.
    expect(parseRunOptions([...BASE, '--conversation', 'default'])).toMatchObject({ conversation_once: false, duration_s: 30 });
    expect(parseRunOptions(BASE).conversation_once).toBe(false);
    expect(usageError(noDuration)).toBe('--duration is required');
    expect(usageError([...noDuration, '--audio', 'in.wav'])).toBe('--duration is required');
    // Arriving sessions take their length from --session-duration (a conversation's own by default), not from this rule.
    expect(parseRunOptions(['--url', 'ws://127.0.0.1:1/v1/realtime', '--output', 'o', '--arrival-rate', '2', '--run-for', '10', '--conversation', 'default']).conversation_once).toBe(false);
  });

  it('accepts --flag=value and negative-looking values only where numbers are expected', () => {
    expect(parseRunOptions([...BASE, '--warmup-s=5']).warmup_s).toBe(5);
    expect(usageError(withFlag('--duration', '--5'))).toBe('--duration must be a number, got "--5"');
  });

  describe('arriving sessions', () => {
    const ARRIVE = ['--url', 'ws://127.0.0.1:8765/v1/realtime', '--output', 'out/r', '--arrival-rate', '4'];

    it('takes a rate, a duration distribution and --run-for instead of --concurrency', () => {
      const o = parseRunOptions([...ARRIVE, '--session-duration', 'exp:2', '--run-for', '120']);
      expect(o.arrivals).toEqual({ rate_per_s: 4, process: 'poisson', duration: { kind: 'exp', mean_s: 2 }, run_for_s: 120, max_in_flight: 1024, seed: 1 });
      expect(o).toMatchObject({ concurrency: 0, duration_s: 2 });
      // --duration stands for both when they are not given.
      expect(parseRunOptions([...ARRIVE, '--duration', '5', '--arrivals', 'constant', '--seed', '9']).arrivals).toMatchObject({ process: 'constant', duration: { kind: 'fixed', s: 5 }, run_for_s: 5, seed: 9 });
      expect(parseRunOptions(BASE).arrivals).toBeNull();
    });

    it("makes each session as long as its conversation with --conversation, unless a duration is asked", () => {
      // The bound is filled in once the script is read (run-command): NaN until then.
      expect(parseRunOptions([...ARRIVE, '--run-for', '60', '--conversation', 'default']).arrivals?.duration).toEqual({ kind: 'conversation', bound_s: NaN });
      expect(parseRunOptions([...ARRIVE, '--run-for', '60', '--session-duration', 'conversation', '--conversation', 'default']).arrivals?.duration.kind).toBe('conversation');
      expect(parseRunOptions([...ARRIVE, '--run-for', '60', '--session-duration', 'exp:20', '--conversation', 'default']).arrivals?.duration).toEqual({ kind: 'exp', mean_s: 20 });
      expect(usageError([...ARRIVE, '--run-for', '60', '--session-duration', 'conversation'])).toBe('--session-duration conversation is the length of a --conversation: give one');
    });

    it('retries a blocked arrival only when --admission-retries is given', () => {
      expect(parseRunOptions([...ARRIVE, '--duration', '5']).admission.retries).toBe(0);
      expect(parseRunOptions([...ARRIVE, '--duration', '5', '--admission-retries', '2']).admission.retries).toBe(2);
      expect(parseRunOptions(BASE).admission.retries).toBe(3);
    });

    it('refuses --concurrency beside it, and what an arrival run cannot take, in one line each', () => {
      expect(usageError([...ARRIVE, '--duration', '5', '--concurrency', '8'])).toBe('--arrival-rate and --concurrency are two loads: give one');
      expect(usageError([...ARRIVE, '--run-for', '5'])).toBe('--arrival-rate needs --session-duration or --duration');
      expect(usageError([...ARRIVE, '--session-duration', 'exp:2'])).toBe('--arrival-rate needs --run-for or --duration');
      expect(usageError([...ARRIVE, '--duration', '5', '--session-duration', 'exp:0'])).toMatch(/^--session-duration: MEAN must be a positive number/);
      expect(usageError([...ARRIVE, '--duration', '5', '--processes', '2'])).toBe('--arrival-rate runs in one process: no --shard, --start-at or --processes');
      expect(usageError([...BASE, '--run-for', '5'])).toBe('--run-for is for --arrival-rate');
      expect(usageError([...ARRIVE, '--duration', '5', '--arrival-rate', '0'])).toMatch(/^--arrival-rate must be/);
    });
  });
});
