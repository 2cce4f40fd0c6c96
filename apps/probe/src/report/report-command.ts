import { EXIT, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { writeReport } from '@duplex-bench/report';

export const REPORT_FLAGS = {
  output: { kind: 'string', group: 'output', help: 'where to write the page (default: DIR/report.html)', value: 'FILE' },
  'mock-stats': { kind: 'string', group: 'input', help: "the mock's --stats-output file, to show the server's view (arrival deviation)", value: 'FILE' },
  'bin-s': { kind: 'number', min: 0, exclusive: true, default: 0.5, group: 'output', help: 'time bin of the pacing chart, seconds', value: 'S' },
} as const;

async function report(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, REPORT_FLAGS);
  if (f._.length !== 1) throw new UsageError('usage: report DIR [--output FILE] [--mock-stats FILE]');
  const path = await writeReport(f._[0], { output: f.output, mock_stats: f['mock-stats'], bin_s: f['bin-s'] });
  io.stdout.write(`report written to ${path}\n`);
  return EXIT.ok;
}

export const REPORT_COMMAND: CliCommand = {
  name: 'report',
  summary: 'one self-contained HTML page of a run, recording, merged run or sweep: verdict, pacing over time, the client loop, responses, sessions; a sweep: its capacity curve',
  usage: 'DIR [--output FILE] [--mock-stats FILE]',
  flags: REPORT_FLAGS,
  run: report,
};
