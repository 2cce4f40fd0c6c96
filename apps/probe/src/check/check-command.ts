import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseFlags, UsageError } from '@duplex-bench/cli';
import { checkNativeTrace, grantedProfile, NATIVE_PROFILES, parseTraceLines, type NativeCheckResult, type NativeProfileName } from '@duplex-bench/protocol';
import { EXIT } from '@duplex-bench/cli';

export const CHECK_FLAGS = {
  profile: { kind: 'enum', values: ['nemotron', 'minicpmo'], group: 'dialect', help: "grade against this native profile instead of the one each trace's grant states" },
  output: { kind: 'string', group: 'output', help: 'write the verdicts as JSON to this file', value: 'FILE' },
  quiet: { kind: 'bool', group: 'output', help: 'print only the verdict line' },
} as const;

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

export interface SessionCheck extends NativeCheckResult {
  trace: string;
  profile: NativeProfileName | null;
  /** How the profile was chosen. */
  profile_source: '--profile' | 'grant' | 'none';
}

export interface CheckReport {
  contract: string;
  sessions: number;
  pass: number;
  fail: number;
  not_exercised: number;
  results: SessionCheck[];
}

/** Trace files under a run directory (`sessions/<id>/trace.jsonl`), or the one file given. */
async function traceFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new UsageError(`${path}: no such file or directory`);
  }
  if (info.isFile()) return [path];
  const root = join(path, 'sessions');
  let ids: string[];
  try {
    ids = (await readdir(root)).sort();
  } catch {
    throw new UsageError(`${path} holds no sessions/ directory; give a run directory or a trace.jsonl`);
  }
  const files: string[] = [];
  for (const id of ids) {
    const file = join(root, id, 'trace.jsonl');
    if (await stat(file).then((s) => s.isFile(), () => false)) files.push(file);
  }
  if (files.length === 0) throw new UsageError(`${path}: no sessions/*/trace.jsonl (run with --trace full --keep-traces)`);
  return files;
}

/** An events-mode trace (`--trace events`) keeps audio as byte counts, which the contract cannot check. */
function withoutPayloads(records: readonly unknown[]): boolean {
  return records.some((r) => {
    const event = (r as { event?: { type?: unknown; audio?: unknown; delta?: unknown } } | null)?.event;
    return event?.type === 'input_audio_buffer.append' && typeof event.audio === 'number';
  });
}

/** Grades one trace file against the native contract. */
export async function checkTraceFile(file: string, profile?: NativeProfileName): Promise<SessionCheck> {
  const { records, errors } = parseTraceLines(await readFile(file, 'utf8'));
  const chosen = profile ? NATIVE_PROFILES[profile] : grantedProfile(records);
  const source = profile ? '--profile' : chosen ? 'grant' : 'none';
  // Without a profile the unit and output rate are unknown; nemotron's are the default, and the grant check says why it fails.
  const result = checkNativeTrace(records, chosen ?? NATIVE_PROFILES.nemotron, { line_errors: errors });
  if (!chosen) result.violations.unshift('the grant states no known profile (native_unit_ms and output_audio_format.rate); give --profile');
  if (withoutPayloads(records)) result.violations.unshift('audio payloads were replaced by their byte counts (--trace events); record with --trace full to check');
  return { trace: file, profile: chosen?.name ?? null, profile_source: source, ...result };
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
  lines.push(`${report.sessions} session(s): ${report.pass} pass, ${report.fail} fail, ${report.not_exercised} not exercised (no input sent while output arrived)`);
  return lines.join('\n');
}

/** `probe check`: grades traces against the native contract, writes check.json, exits 0 only when every trace passes. */
export async function checkCommand(
  options: CheckOptions,
  io: { stdout: { write(s: string): unknown }; stderr: { write(s: string): unknown }; emit?(summary: unknown): void },
): Promise<number> {
  const files = await traceFiles(options.path);
  const results: SessionCheck[] = [];
  for (const file of files) results.push(await checkTraceFile(file, options.profile));
  const count = (status: NativeCheckResult['status']) => results.filter((r) => r.status === status).length;
  const report: CheckReport = {
    contract: 'native dialect, sglang-omni duplex (benchmarks/duplex oracle at 1035e3ff): every rule, by profile',
    sessions: results.length,
    pass: count('pass'),
    fail: count('fail'),
    not_exercised: count('not_exercised'),
    results,
  };
  const isFile = files.length === 1 && files[0] === options.path;
  const out = options.output ?? join(isFile ? dirname(options.path) : options.path, 'check.json');
  try {
    await writeFile(out, JSON.stringify(report, null, 1));
  } catch (err) {
    io.stderr.write(`error: cannot write ${out}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`${renderCheck(report, options.quiet)}\nwritten to ${out}\n`);
  const { contract, sessions, pass, fail, not_exercised } = report;
  io.emit?.({ contract, sessions, pass, fail, not_exercised, failed: results.filter((r) => r.status === 'fail').map((r) => r.trace), output: out });
  return report.pass === report.sessions ? EXIT.ok : EXIT.failed;
}
