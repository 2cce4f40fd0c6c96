// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the
// command. So what the help states of a lib is written here (command-flags.spec.ts holds it to the lib's).

/** Flags of sessions that arrive and leave on an open-loop schedule, instead of `--concurrency` at once. */
export const ARRIVAL_FLAGS = {
  'arrival-rate': { kind: 'number', min: 0, exclusive: true, group: 'load', help: 'sessions arriving per second on one open-loop schedule fixed up front, instead of --concurrency: each connects at its intended start and streams its own --session-duration; the summary gains an arrivals block (blocked, blocking probability, offered Erlangs)', value: 'R' },
  arrivals: { kind: 'enum', values: ['poisson', 'constant'], default: 'poisson', group: 'load', help: 'with --arrival-rate: poisson (exponential gaps, seeded by --seed) or constant (exactly 1/R apart)' },
  'session-duration': { kind: 'string', group: 'load', help: 'with --arrival-rate: how long each session streams, seconds: fixed:S, exp:MEAN or lognormal:MEAN,COV, the script repeated until it ends; or conversation, one pass of the --conversation script (default: conversation with --conversation, else fixed:--duration)', value: 'SPEC' },
  'run-for': { kind: 'number', min: 0, exclusive: true, group: 'load', help: 'with --arrival-rate: arrivals are scheduled for this long; the run ends when the last session ends, seconds (default: --duration)', value: 'S' },
  'max-in-flight': { kind: 'int', min: 1, default: 1024, group: 'limits', help: 'with --arrival-rate: a session due while this many are in flight is counted client_skipped, never delayed', value: 'N' },
  seed: { kind: 'int', min: 0, default: 1, group: 'load', help: 'with --arrival-rate: seed of the arrival gaps and session durations (recorded)', value: 'N' },
} as const;
