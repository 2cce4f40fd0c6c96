// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the
// command. So the names and defaults it states are written here (command-flags.spec.ts holds them to the lib's).

export const SWEEP_FLAGS = {
  url: { kind: 'string', group: 'connection', help: 'ws:// or wss:// endpoint of the realtime server (none: the built-in mock, started once for the whole sweep, speaking --protocol)', value: 'URL' },
  'mock-profile': { kind: 'enum', values: ['append-echo', 'nemotron', 'minicpmo', 'model'], group: 'connection', help: "without --url: the built-in native mock's profile (default append-echo)" },
  'mock-args': { kind: 'string', default: '', group: 'connection', help: 'without --url: further serve flags for the built-in mock, as one string (e.g. "--capacity-sessions 12"), so the sweep has a limit to find', value: 'FLAGS' },
  sessions: { kind: 'string', group: 'load', help: 'session counts to search, MIN:MAX: doubling from MIN, then bisecting (default: 8:512)', value: 'MIN:MAX' },
  'arrival-rate': { kind: 'string', group: 'load', help: 'instead of --sessions: offered rates to search, sessions per second, MIN:MAX: doubling from MIN, then bisecting; each point is run --arrival-rate R (give --session-duration, --run-for and --warmup-s in --run-args)', value: 'MIN:MAX' },
  'rate-resolution': { kind: 'number', min: 0, exclusive: true, group: 'load', help: 'with --arrival-rate: bisection stops when the last passing and first failing rates are this close, sessions/s (default: a tenth of MIN)', value: 'R' },
  'max-blocking': { kind: 'number', min: 0, default: 0.01, group: 'load', help: 'with --arrival-rate: a rate passes only when its blocking probability (refused / arrivals, pooled over its runs, after --warmup-s when given) is at most this', value: 'P' },
  seed: { kind: 'int', min: 0, default: 1, group: 'load', help: 'with --arrival-rate: seed of the first run at each rate; run r gets seed + r - 1', value: 'N' },
  runs: { kind: 'int', min: 1, default: 3, group: 'load', help: 'runs per session count (or rate), each a fresh process; a count passes only when every run does', value: 'N' },
  duration: { kind: 'number', min: 0, exclusive: true, default: 30, group: 'load', help: 'audio per session in each run, seconds', value: 'S' },
  resolution: { kind: 'int', min: 1, default: 4, group: 'load', help: 'bisection stops when the last passing and first failing counts are this close, sessions', value: 'N' },
  slo: { kind: 'string', default: 'underruns=0,ttfp_p99_ms<=1000,incomplete=0', group: 'load', help: 'what each run must meet, figure<=bound joined by commas; figures: ttfp_p99_ms, ttft_p99_ms, stream_ttfp_p99_ms, stream_rtf_p99, rtf_p99, drift_p99_ms, output_gap_p99_ms, receive_delay_p99_ms, underruns, incomplete, unit_lag_p95_ms, unit_miss_rate, response_latency_p95_ms, stop_latency_p95_ms, pause_takeover_rate, backchannel_yield_rate', value: 'TERMS' },
  target: {
    kind: 'enum',
    values: ['server', 'client'],
    default: 'server',
    group: 'load',
    help: "server: how many sessions the server holds (the SLO); client: how many the probe itself holds against a mock (pacing only: a count passes when every run is qualified)",
  },
  processes: {
    kind: 'string',
    default: '1',
    group: 'load',
    help: "probe processes per run, the count's sessions split evenly over them: N, or auto (from 1, doubled up to --max-processes whenever the client fell behind, and the count run again)",
    value: 'N|auto',
  },
  'max-processes': { kind: 'int', min: 1, group: 'load', help: 'with --processes auto: at most this many (default: the CPUs available)', value: 'N' },
  'server-metrics': { kind: 'string', group: 'telemetry', help: "every run scrapes the server's Prometheus endpoint (run --server-metrics); with --server-gauge, the sweep keeps those gauges per point and names them at its capacity", value: 'URL' },
  'server-gauge': { kind: 'list', group: 'telemetry', help: 'with --server-metrics: a gauge each run reports and the sweep keeps (mean and max per run; the capacity point\'s in sweep.json and on its page), e.g. DCGM_FI_DEV_FB_USED', value: 'NAME' },
  'run-to-end': { kind: 'bool', group: 'load', help: 'run every point for its whole --duration; by default a one-process run ends as soon as an --slo term it can judge live can no longer pass (run --abort-on-fail), so a failing point costs seconds', },
  'abort-grace-s': { kind: 'number', min: 0, default: 10, group: 'load', help: 'without --run-to-end: how long a TTFP, TTFT or RTF p99 term may fail before a run ends, seconds', value: 'S' },
  protocol: { kind: 'enum', values: ['native', 'openai', 'vllm-omni'], default: 'native', group: 'dialect', help: "the server's dialect" },
  'run-args': { kind: 'string', default: '', group: 'dialect', help: 'further flags for every run, as one string (e.g. "--model m --packet-ms 160")', value: 'FLAGS' },
  output: { kind: 'string', required: true, group: 'output', help: 'sweep directory: sweep.json and one run directory per run; running again resumes', value: 'DIR' },
} as const;
