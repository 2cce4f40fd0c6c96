import { EXIT, parseFlags, type CliCommand } from '@duplex-bench/cli';
import { LauncherLink } from '@duplex-bench/launcher';
import { CHECK_FLAGS, checkCommand, parseCheckOptions } from './check/check-command';
import { MERGE_FLAGS, mergeCommand } from './merge/merge-command';
import { recordCommand } from './record/record-command';
import { parseRecordOptions, RECORD_FLAGS } from './record/record-options';
import { REPORT_COMMAND, writeReport } from './report/report-command';
import { COMPARE_COMMAND } from './sweep/compare-command';
import { SWEEP_COMMAND } from './sweep/sweep-command';
import { launchCommand } from './run/launch-command';
import { runCommand } from './run/run-command';
import { parseRunOptions, RUN_FLAGS } from './run/run-options';

/**
 * `command` with `--report`: once it has written its output directory (any status but bad input),
 * the HTML report of that directory is written beside it.
 */
function withReport(command: CliCommand): CliCommand {
  const flags = { ...command.flags, report: { kind: 'bool', group: 'output', help: 'also write OUTPUT/report.html (see the report command) at the end' } } as const;
  return {
    ...command,
    flags,
    run: async (argv, io) => {
      const f = parseFlags(argv, flags) as { report: boolean; output?: unknown };
      const drop = (a: string[]) => a.filter((x) => x !== '--report');
      const code = await command.run(drop(argv), { ...io, argv: drop(io.argv) });
      if (!f.report || code === EXIT.usage || typeof f.output !== 'string') return code;
      try {
        io.stderr.write(`report written to ${await writeReport(f.output)}\n`);
      } catch (err) {
        io.stderr.write(`error: report: ${(err as Error).message}\n`);
        return code === EXIT.ok ? EXIT.failed : code;
      }
      return code;
    },
  };
}

/** The probe's commands: flags for `--help` and parsing, and what runs each. */
export const PROBE_COMMANDS: CliCommand[] = [
  withReport({
    name: 'run',
    summary: 'stream --concurrency sessions of --duration seconds at an absolute cadence and check every packet',
    usage: '--url ws://HOST:PORT/v1/realtime --concurrency N --duration S --output DIR [flags]',
    flags: RUN_FLAGS,
    json: true,
    run: async (argv, io) => {
      const options = parseRunOptions(argv);
      if (options.processes > 1) return launchCommand(options, io);
      if (!LauncherLink.inChild()) return runCommand(options, io);
      // A child of the launcher: the start time comes from the parent, and the outcome goes back to it.
      const link = new LauncherLink();
      const code = await runCommand(options, io, undefined, {
        startGate: (opened, failed) => link.ready(opened, failed),
        failedBeforeGate: (message) => link.failed(message),
      });
      link.done(code);
      return code;
    },
  }),
  withReport({
    name: 'record',
    summary: 'record every sample of a dataset as one session each, resumable, with response figures and post-processing',
    usage: '--url URL --concurrency N --output DIR [flags]',
    flags: RECORD_FLAGS,
    json: true,
    run: (argv, io) => recordCommand(parseRecordOptions(argv), io),
  }),
  withReport({
    name: 'merge',
    summary: 'pool the runs of several processes of one host into one summary (percentiles from merged histograms)',
    usage: 'RUN_DIR... --output DIR',
    flags: MERGE_FLAGS,
    json: true,
    run: (argv, io) => mergeCommand(argv, io),
  }),
  {
    name: 'check',
    summary: "grade native traces against sglang-omni's duplex contract, by the profile each grant states",
    usage: 'DIR|TRACE.jsonl [--profile nemotron|minicpmo] [--output FILE]',
    flags: CHECK_FLAGS,
    json: true,
    run: (argv, io) => checkCommand(parseCheckOptions(argv), io),
  },
  REPORT_COMMAND,
  withReport(SWEEP_COMMAND),
  COMPARE_COMMAND,
];
