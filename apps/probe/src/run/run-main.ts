import type { RunIo } from '@duplex-bench/cli';
import { entryModule, LauncherLink } from '@duplex-bench/launcher';
import { dialectWarnings, launchSessions, withBuiltinMock } from '@duplex-bench/run';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';

/** What each launched child runs: the probe's `main` (dist/probe.js when built). */
const MAIN = entryModule(__dirname, '../main', 'probe');

/** `run`: one process, a launcher of `--processes` children, or one such child reporting to its launcher. */
export async function runMain(argv: string[], io: RunIo): Promise<number> {
  const options = parseRunOptions(argv);
  const builtin = options.builtin_mock;
  if (builtin && !LauncherLink.inChild()) return withBuiltinMock({ ...options, ...builtin }, io, (url) => runCommand({ ...options, url }, io));
  // Once per command: a launched child leaves the warnings to its launcher.
  if (!LauncherLink.inChild()) for (const line of dialectWarnings(options)) io.stderr.write(`${line}\n`);
  // The merge's lines (and the HTTP summary's, which they may include) load only in the process that launches.
  if (options.processes > 1) return launchSessions(options, io, (await import('../merge/merge-command')).renderMerged, MAIN);
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
