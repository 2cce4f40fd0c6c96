import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '@duplex-bench/cli';
import { checkNativeTrace, grantedProfile, NATIVE_PROFILES, parseTraceLines, type NativeCheckResult, type NativeProfileName } from '@duplex-bench/protocol';

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
export async function traceFiles(path: string): Promise<string[]> {
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

/** Grades every trace of a run directory (or the one trace file given) against the native contract. */
export async function checkTraces(files: string[], profile?: NativeProfileName): Promise<CheckReport> {
  const results: SessionCheck[] = [];
  for (const file of files) results.push(await checkTraceFile(file, profile));
  const count = (status: NativeCheckResult['status']) => results.filter((r) => r.status === status).length;
  return {
    contract: 'native dialect, sglang-omni duplex (benchmarks/duplex oracle at 1035e3ff): every rule, by profile',
    sessions: results.length,
    pass: count('pass'),
    fail: count('fail'),
    not_exercised: count('not_exercised'),
    results,
  };
}
