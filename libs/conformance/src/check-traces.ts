import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NATIVE_PROFILES, type NativeProfileName } from '@duplex-bench/protocol';
import { checkOpenAITrace, checkVllmOmniTrace } from './dialect-rules';
import { ConformanceError } from './errors';
import { checkLegacyTrace, type LegacyCheckMetrics } from './legacy-rules';
import { checkNativeTrace, grantedProfile, parseTraceLines } from './native/native-check';
import type { NativeCheckResult } from './native/native-replay';
import { readRunRecord, SESSIONS_DIR, sessionFile } from '@duplex-bench/results';

export interface SessionCheck {
  trace: string;
  status: NativeCheckResult['status'] | 'not_graded';
  violations: string[];
  /** Native: the oracle's coverage and figures; other dialects: what their rules counted. */
  coverage?: NativeCheckResult['coverage'];
  metrics?: NativeCheckResult['metrics'] | LegacyCheckMetrics | Record<string, number>;
  profile: NativeProfileName | null;
  /** How the profile was chosen. */
  profile_source: '--profile' | 'grant' | 'none';
}

export interface CheckReport {
  contract: string;
  /** The dialect the run spoke (from its run.json; native when there is none: traces of sglang-omni's own client). */
  protocol: string;
  sessions: number;
  pass: number;
  fail: number;
  not_exercised: number;
  not_graded: number;
  results: SessionCheck[];
}

/** The contracts `check` knows, by the protocol a run.json states. */
const CONTRACTS: Record<string, string> = {
  native: 'native dialect, sglang-omni duplex (benchmarks/duplex oracle at 1035e3ff): every rule, by profile',
  'vllm-omni':
    "vLLM-Omni's duplex flow, the rules we know: the client speaks first, every numbered event acknowledged, no error refusing what the client sent (playback acks among them), session.close answered with session.closed, nothing after it",
  openai: 'OpenAI Realtime flow, the rules we know: the server speaks first; response.create only when no response is active',
  'sglang-legacy': "sglang-omni's legacy turn-based protocol, qwen3-omni-half-duplex (benchmarks/duplex oracle evaluate_legacy_trace at 3d801fa0): every rule",
};

/** The protocol a run directory's run.json states (for a trace file: the run directory two levels up), or null when there is none. */
export async function runProtocol(path: string, isFile: boolean): Promise<string | null> {
  const dir = isFile ? join(path, '..', '..', '..') : path;
  const run = await readRunRecord(dir);
  return typeof run?.protocol === 'string' ? run.protocol : null;
}

/** Trace files under a run directory (`sessions/<id>/trace.jsonl`), or the one file given. */
export async function traceFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new ConformanceError('NO_SUCH_PATH', `${path}: no such file or directory`, path);
  }
  if (info.isFile()) return [path];
  const root = join(path, SESSIONS_DIR);
  let ids: string[];
  try {
    ids = (await readdir(root)).sort();
  } catch {
    throw new ConformanceError('NO_SESSIONS_DIR', `${path} holds no sessions/ directory; give a run directory or a trace.jsonl`, path);
  }
  const files: string[] = [];
  for (const id of ids) {
    const file = sessionFile(path, id, 'trace');
    if (await stat(file).then((s) => s.isFile(), () => false)) files.push(file);
  }
  if (files.length === 0) throw new ConformanceError('NO_TRACES', `${path}: no sessions/*/trace.jsonl (run with --trace full --keep-traces)`, path);
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
  const result = checkNativeTrace(records, chosen ?? NATIVE_PROFILES.nemotron, { line_errors: errors, max_admission_attempts: await recordedAdmissionLimit(file) });
  if (!chosen) result.violations.unshift('the grant states no known profile (native_unit_ms and output_audio_format.rate); give --profile');
  if (withoutPayloads(records)) result.violations.unshift('audio payloads were replaced by their byte counts (--trace events); record with --trace full to check');
  return { trace: file, profile: chosen?.name ?? null, profile_source: source, ...result };
}

/** The retry limit the run recorded (run.json `dialect.max_admission_attempts`), read from the run directory above a session's trace. */
async function recordedAdmissionLimit(file: string): Promise<number | undefined> {
  const limit = (await readRunRecord(join(file, '..', '..', '..')))?.dialect?.max_admission_attempts;
  return typeof limit === 'number' ? limit : undefined;
}

/** Grades one trace of a legacy run (`--profile qwen3-omni-half-duplex`) as sglang-omni's legacy oracle does. */
async function checkLegacyTraceFile(file: string, base: Pick<SessionCheck, 'trace' | 'profile' | 'profile_source'>): Promise<SessionCheck> {
  const { records, errors } = parseTraceLines(await readFile(file, 'utf8'));
  const result = checkLegacyTrace(records, { line_errors: errors.map((e) => `unreadable line: ${e}`), max_admission_attempts: await recordedAdmissionLimit(file) });
  if (withoutPayloads(records)) result.violations.unshift('audio payloads were replaced by their byte counts (--trace events); record with --trace full to check');
  return { ...base, ...result, status: result.violations.length === 0 ? 'pass' : 'fail' };
}

/** Grades one trace of a vllm-omni or openai run by the rules known of its flow; any other protocol is not graded. */
async function checkDialectTraceFile(file: string, protocol: string): Promise<SessionCheck> {
  const base = { trace: file, profile: null, profile_source: 'none' as const };
  if (protocol === 'sglang-legacy') return checkLegacyTraceFile(file, base);
  if (protocol !== 'vllm-omni' && protocol !== 'openai') return { ...base, status: 'not_graded', violations: [`no rules are written for protocol ${protocol}`] };
  const { records, errors } = parseTraceLines(await readFile(file, 'utf8'));
  const result = protocol === 'vllm-omni' ? checkVllmOmniTrace(records) : checkOpenAITrace(records);
  const violations = [...errors.map((e) => `unreadable line: ${e}`), ...result.violations];
  return { ...base, status: violations.length === 0 ? 'pass' : 'fail', violations, metrics: result.metrics };
}

/**
 * Grades every trace of a run directory (or the one trace file given) by the run's own protocol:
 * native by the oracle (also when no run.json says: traces of sglang-omni's own client), vllm-omni
 * and openai by the rules known of their flows, anything else `not_graded`.
 */
export async function checkTraces(files: string[], profile?: NativeProfileName, protocol = 'native'): Promise<CheckReport> {
  const results: SessionCheck[] = [];
  for (const file of files) results.push(protocol === 'native' ? await checkTraceFile(file, profile) : await checkDialectTraceFile(file, protocol));
  const count = (status: SessionCheck['status']) => results.filter((r) => r.status === status).length;
  return {
    contract: CONTRACTS[protocol] ?? `protocol ${protocol}: no rules written; not graded`,
    protocol,
    sessions: results.length,
    pass: count('pass'),
    fail: count('fail'),
    not_exercised: count('not_exercised'),
    not_graded: count('not_graded'),
    results,
  };
}
