import { UsageError } from '@duplex-bench/launcher';
import { LauncherLink } from '@duplex-bench/launcher';
import { checkCommand, parseCheckOptions } from './check/check-command';
import { mergeCommand } from './merge/merge-command';
import { recordCommand } from './record/record-command';
import { parseRecordOptions } from './record/record-options';
import { launchCommand } from './run/launch-command';
import { EXIT } from './run/command-io';
import { runCommand } from './run/run-command';
import { parseRunOptions } from './run/run-options';

const USAGE =
  'usage: probe run --url ws://HOST:PORT/v1/realtime [--protocol native|openai] --concurrency N --duration S --output DIR [flags]' +
  ' | probe record --url URL --concurrency N --output DIR [flags] | probe merge DIR... --output DIR' +
  ' | probe check DIR|TRACE.jsonl [--profile nemotron|minicpmo]';

/** Runs one subcommand; returns the exit status. Bad input is one line on stderr and status 2. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run': {
        const options = parseRunOptions(rest);
        const io = { stdout: process.stdout, stderr: process.stderr, signals: process, exitNow: (code: number) => process.exit(code), argv: rest };
        if (options.processes > 1) return await launchCommand(options, io);
        if (!LauncherLink.inChild()) return await runCommand(options, io);
        // A child of the launcher: the start time comes from the parent, and the outcome goes back to it.
        const link = new LauncherLink();
        const code = await runCommand(options, io, undefined, {
          startGate: (opened, failed) => link.ready(opened, failed),
          failedBeforeGate: (message) => link.failed(message),
        });
        link.done(code);
        return code;
      }
      case 'merge':
        return await mergeCommand(rest, { stdout: process.stdout });
      case 'check':
        return await checkCommand(parseCheckOptions(rest), { stdout: process.stdout, stderr: process.stderr });
      case 'record':
        return await recordCommand(parseRecordOptions(rest), {
          stdout: process.stdout,
          stderr: process.stderr,
          signals: process,
          exitNow: (code: number) => process.exit(code),
          argv: rest,
        });
      default:
        throw new UsageError(command ? `unknown command "${command}"; ${USAGE}` : USAGE);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.DUPLEX_BENCH_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
    return EXIT.failed;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    // Everything is closed by now; a handle left open must not keep the process alive.
    setTimeout(() => process.exit(code), 5000).unref();
  });
}
