import { type CliCommand } from '@duplex-bench/cli';
import { LauncherLink } from '@duplex-bench/launcher';
import { CHECK_FLAGS, checkCommand, parseCheckOptions } from './check/check-command';
import { HTTP_COMMAND } from './http/http-command';
import { K8S_COMMAND } from './k8s/k8s-command';
import { MERGE_FLAGS, mergeCommand } from './merge/merge-command';
import { recordCommand } from './record/record-command';
import { parseRecordOptions, RECORD_FLAGS } from './record/record-options';
import { withReport } from './report/with-report';
import { REPORT_COMMAND } from './report/report-command';
import { COMPARE_COMMAND } from './sweep/compare-command';
import { SWEEP_COMMAND } from './sweep/sweep-command';
import { dialectWarnings } from './run/dialect-options';
import { launchCommand } from './run/launch-command';
import { runCommand } from './run/run-command';
import { parseRunOptions, RUN_FLAGS } from './run/run-options';

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
      // Once per command: a launched child leaves the warnings to its launcher.
      if (!LauncherLink.inChild()) for (const line of dialectWarnings(options)) io.stderr.write(`${line}\n`);
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
    run: (argv, io) => {
      const options = parseRecordOptions(argv);
      for (const line of dialectWarnings(options)) io.stderr.write(`${line}\n`);
      return recordCommand(options, io);
    },
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
  withReport(HTTP_COMMAND),
  K8S_COMMAND,
];
