import { writeFile } from 'node:fs/promises';
import { loadHttpReport, renderHttpHtml } from './http-report';
import { loadReport } from './report-data';
import { renderReportHtml } from './report-html';
import { loadSweepReport, renderSweepHtml } from './sweep-report';
import { runFile } from '@duplex-bench/results';

export interface ReportOptions {
  /** Where to write the page (default: DIR/report.html). */
  output?: string;
  /** The mock's stats file, to show the server's view. */
  mock_stats?: string;
  /** Time bin of the pacing chart, seconds. */
  bin_s?: number;
  /** The SLO the server verdict checks (default: the sweep's). */
  slo?: string;
}

/** Writes the report of the run, recording, merged run, sweep or http run in `dir` and returns its path. */
export async function writeReport(dir: string, options: ReportOptions = {}): Promise<string> {
  const path = options.output ?? runFile(dir, 'report');
  // A sweep directory gets the capacity page, an http run its requests page; any other run its run page.
  const sweep = await loadSweepReport(dir);
  const http = sweep ? null : await loadHttpReport(dir);
  await writeFile(path, sweep ? renderSweepHtml(sweep) : http ? renderHttpHtml(http) : renderReportHtml(await loadReport(dir, { mock_stats: options.mock_stats, bin_s: options.bin_s, slo: options.slo })));
  return path;
}
