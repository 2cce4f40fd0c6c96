import { EXIT, parseFlags, UsageError, type RunIo } from '@duplex-bench/cli';
import { writeReport } from '@duplex-bench/report';
import { parseSlo } from '@duplex-bench/experiments';
import { REPORT_FLAGS } from './report-flags';

/** `report DIR`: the HTML page of a run directory, written beside it (or to --output). */
export async function reportCommand(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, REPORT_FLAGS);
  if (f._.length !== 1) throw new UsageError('usage: report DIR [--output FILE] [--mock-stats FILE]');
  if (f.slo !== undefined) {
    try {
      parseSlo(f.slo);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const path = await writeReport(f._[0], { output: f.output, mock_stats: f['mock-stats'], bin_s: f['bin-s'], slo: f.slo });
  io.stdout.write(`report written to ${path}\n`);
  return EXIT.ok;
}

/** `--report` of another command: the page of the directory it wrote, beside it; returns its path. */
export function reportOf(dir: string): Promise<string> {
  return writeReport(dir);
}
