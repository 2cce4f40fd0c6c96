import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { loadReport } from './report-data';
import { renderReportHtml } from './report-html';
import { loadSweepReport, renderSweepHtml } from './sweep-report';

export const REPORT_FLAGS = {
  output: { kind: 'string', group: 'output', help: 'where to write the page (default: DIR/report.html)', value: 'FILE' },
  'mock-stats': { kind: 'string', group: 'input', help: "the mock's --stats-output file, to show the server's view (arrival deviation)", value: 'FILE' },
  'bin-s': { kind: 'number', min: 0, exclusive: true, default: 0.5, group: 'output', help: 'time bin of the pacing chart, seconds', value: 'S' },
} as const;

/** Writes the report of the run in `dir` and returns its path. */
export async function writeReport(dir: string, options: { output?: string; mock_stats?: string; bin_s?: number } = {}): Promise<string> {
  const path = options.output ?? join(dir, 'report.html');
  // A sweep directory gets the capacity page; any other run its run page.
  const sweep = await loadSweepReport(dir);
  await writeFile(path, sweep ? renderSweepHtml(sweep) : renderReportHtml(await loadReport(dir, { mock_stats: options.mock_stats, bin_s: options.bin_s })));
  return path;
}

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
