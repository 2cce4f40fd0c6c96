import { writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EXIT, parseFlags, UsageError } from '@duplex-bench/cli';
import type { NativeProfileName } from '@duplex-bench/protocol';
import { checkTraces, ConformanceError, runProtocol, traceFiles, type CheckReport } from '@duplex-bench/conformance';
import { runFile } from '@duplex-bench/results';
import { CHECK_FLAGS } from './check-flags';

export interface CheckOptions {
  /** A run directory (its `sessions/<id>/trace.jsonl`) or one trace file. */
  path: string;
  /** Unset: each trace is held to the profile its own grant states. */
  profile?: NativeProfileName;
  /** Where check.json goes: by default beside the traces (the run directory, or the file's directory). */
  output?: string;
  /** Print only the tally and the failing sessions' first violations. */
  quiet: boolean;
}

export function parseCheckOptions(argv: string[]): CheckOptions {
  const f = parseFlags(argv, CHECK_FLAGS);
  if (f._.length !== 1) throw new UsageError('usage: probe check DIR|TRACE.jsonl [--profile nemotron|minicpmo] [--output check.json]');
  return { path: f._[0], profile: f.profile as NativeProfileName | undefined, output: f.output, quiet: f.quiet };
}

const SHOWN_VIOLATIONS = 20;

/** The console lines of a report: one per session, its violations indented, then the tally. */
export function renderCheck(report: CheckReport, quiet: boolean): string {
  const lines: string[] = [];
  for (const r of report.results) {
    if (quiet && r.status === 'pass') continue;
    lines.push(`${r.trace}: ${r.status}${r.profile ? ` (${r.profile}, from ${r.profile_source})` : ''}${r.violations.length ? `, ${r.violations.length} violation(s)` : ''}`);
    const shown = quiet ? r.violations.slice(0, 3) : r.violations.slice(0, SHOWN_VIOLATIONS);
    for (const v of shown) lines.push(`  - ${v}`);
    if (r.violations.length > shown.length) lines.push(`  … and ${r.violations.length - shown.length} more (check.json has them all)`);
  }
  const graded = report.not_graded > 0 ? `, ${report.not_graded} not graded (${report.contract})` : '';
  lines.push(`${report.sessions} session(s): ${report.pass} pass, ${report.fail} fail, ${report.not_exercised} not exercised (no input sent while output arrived)${graded}; graded as a ${report.protocol} run`);
  return lines.join('\n');
}

/** `probe check`: grades traces against the native contract, writes check.json, exits 0 only when every trace passes. */
export async function checkCommand(
  options: CheckOptions,
  io: { stdout: { write(s: string): unknown }; stderr: { write(s: string): unknown }; emit?(summary: unknown): void },
): Promise<number> {
  let files: string[];
  try {
    files = await traceFiles(options.path);
  } catch (err) {
    if (err instanceof ConformanceError) throw new UsageError(err.message);
    throw err;
  }
  const isFile = files.length === 1 && files[0] === options.path;
  // Each run is graded by its own protocol; a trace with no run.json beside it is native (sglang-omni's own client writes such traces).
  const protocol = (await runProtocol(options.path, isFile)) ?? 'native';
  if (options.profile && protocol !== 'native') throw new UsageError(`--profile is for native runs; this run spoke ${protocol}`);
  const report = await checkTraces(files, options.profile, protocol);
  const results = report.results;
  const out = options.output ?? runFile(isFile ? dirname(options.path) : options.path, 'check');
  try {
    await writeFile(out, JSON.stringify(report, null, 1));
  } catch (err) {
    io.stderr.write(`error: cannot write ${out}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`${renderCheck(report, options.quiet)}\nwritten to ${out}\n`);
  const { contract, protocol: spoken, sessions, pass, fail, not_exercised, not_graded } = report;
  io.emit?.({ contract, protocol: spoken, sessions, pass, fail, not_exercised, not_graded, failed: results.filter((r) => r.status === 'fail').map((r) => r.trace), output: out });
  // A protocol with no rules is said so, never a false failure.
  return report.pass + report.not_graded === report.sessions ? EXIT.ok : EXIT.failed;
}
