export { parseFlags, helpOf, commandOf, FLAG_GROUPS } from './flags';
export type { FlagSpec, FlagSpecs, FlagGroup, Parsed } from './flags';
export { SERVER_METRICS_FLAGS, serverMetricsOptions, TELEMETRY_FLAGS, telemetryOptions } from './telemetry-flags';
export type { ServerMetricsOptions, TelemetryOptions } from './telemetry-flags';
export { EXIT } from './command-io';
export type { RunIo } from './command-io';
export { Interrupts } from './interrupts';
export { runProgram, programHelp, processIo, mainOf, flagsOf } from './program';
export type { CliCommand, CliProgram } from './program';

/* Error types */
export { UsageError } from './flags';
export { VERSION } from './version';
