import { mainOf, runProgram, type CliProgram, type RunIo, VERSION } from '@duplex-bench/cli';
import { PROBE_COMMANDS } from './commands';
import { usageOf } from './errors';

export const PROBE: CliProgram = { name: 'probe', version: VERSION, summary: 'duplex-bench probe: load and measure a realtime full-duplex speech server', commands: PROBE_COMMANDS, usageOf };

/** Runs one probe command line; returns the exit status. */
export function main(argv: string[], io: RunIo): Promise<number> {
  return runProgram(PROBE, argv, io);
}

if (require.main === module) mainOf(PROBE);
