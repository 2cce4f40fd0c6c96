import type { RunIo } from '@duplex-bench/cli';
import { LauncherLink } from '@duplex-bench/launcher';
import { dialectWarnings } from './dialect-options';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';

/** `run`: one process, a launcher of `--processes` children, or one such child reporting to its launcher. */
export async function runMain(argv: string[], io: RunIo): Promise<number> {
  const options = parseRunOptions(argv);
  // Once per command: a launched child leaves the warnings to its launcher.
  if (!LauncherLink.inChild()) for (const line of dialectWarnings(options)) io.stderr.write(`${line}\n`);
  // The launcher (and the merge it ends with) loads only in the process that launches.
  if (options.processes > 1) return (await import('./launch-command')).launchCommand(options, io);
  if (!LauncherLink.inChild()) return runCommand(options, io);
  // A child of the launcher: the start time comes from the parent, and the outcome goes back to it.
  const link = new LauncherLink();
  const code = await runCommand(options, io, undefined, {
    startGate: (opened, failed) => link.ready(opened, failed),
    failedBeforeGate: (message) => link.failed(message),
  });
  link.done(code);
  return code;
}
