// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the
// command. So the names and defaults it states are written here (command-flags.spec.ts holds them to the lib's).

export const COMPARE_FLAGS = {
  arm: { kind: 'list', required: true, group: 'load', help: "an arm: LABEL='flags of duplex-bench run' (give exactly two; the first is A, the baseline)", value: 'LABEL=FLAGS' },
  reps: { kind: 'int', min: 2, default: 5, group: 'load', help: 'repetitions; each runs every arm once, in a fresh random order, each run a fresh process', value: 'N' },
  metric: { kind: 'string', default: 'ttfp_p99_ms', group: 'output', help: 'figures to compare, joined by commas: ttfp_p99_ms, ttft_p99_ms, stream_ttfp_p99_ms, stream_rtf_p99, rtf_p99, drift_p99_ms, output_gap_p99_ms, receive_delay_p99_ms, underruns, incomplete, unit_lag_p95_ms, unit_miss_rate, response_latency_p95_ms, stop_latency_p95_ms, pause_takeover_rate, backchannel_yield_rate, pacing_p99_ms', value: 'NAMES' },
  output: { kind: 'string', required: true, group: 'output', help: 'compare directory: compare.json and one run directory per run; running again resumes', value: 'DIR' },
  seed: { kind: 'int', min: 0, group: 'testing', help: 'seed of the arm order and the bootstrap (default: from the clock, recorded)', value: 'N' },
} as const;
