import { mainOf, type CliProgram, VERSION } from '@duplex-bench/cli';
import { SERVE_COMMAND } from '@duplex-bench/mock';
import { PROBE_COMMANDS } from './commands';
import { usageOf } from './errors';

/** `duplex-bench`: every command in one executable, with its exact exit status. */
export const DUPLEX_BENCH: CliProgram = {
  name: 'duplex-bench',
  version: VERSION,
  summary: 'Load generator and measurement kit for realtime full-duplex speech servers',
  commands: [...PROBE_COMMANDS, SERVE_COMMAND],
  usageOf,
};

/** Runs this process's command line as `duplex-bench`, then exits with its status. */
export function main(): void {
  mainOf(DUPLEX_BENCH);
}

if (require.main === module) main();
