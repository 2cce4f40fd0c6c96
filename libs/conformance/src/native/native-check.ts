/**
 * Grades one session's native (sglang-omni duplex) trace the way the sglang-omni trace oracle does
 * (`benchmarks/duplex/oracle.py` and `oracle_models.py`, commit 1035e3ff; the admission limit as
 * 3d801fa0 takes it, from the recording run rather than a fixed 3): a trace passes here
 * exactly when it passes there, with the same statuses. The rules are the oracle's; this code and
 * its wording are ours. Rule phrases are kept close to the oracle's so the two reports read alike.
 *
 * Agreement reaches into details that look fussy: the oracle validates records with pydantic in
 * strict mode, so `seq: true`, `seq: 0.0` and `native_unit_ms: 80.0` all fail, and it replays a
 * record until the first exception, so the partial state a bad record leaves is the same here.
 *
 * One job per file: python-json.ts reads the lines as Python's json does, python-values.ts compares
 * and prints values as Python does, strict-fields.ts and trace-records.ts read records by the
 * oracle's schema, and native-replay.ts replays them as the oracle's loop does.
 */
import { nativeProfileOf, type NativeProfile } from '@duplex-bench/protocol';
import { PythonJsonReader } from './python-json';
import { dig, isObject, pyGet } from './python-values';
import { NativeReplay, type NativeCheckResult } from './native-replay';

export interface NativeCheckOptions {
  /** Lines of the trace file that could not be read (`parseTraceLines().errors`); each fails the trace. */
  line_errors?: readonly string[];
  /** The retry limit the recording client used (run.json `dialect.max_admission_attempts`); absent: admission attempts need only count up from one. */
  max_admission_attempts?: number;
}

/** Grades one session's trace records (parsed JSON lines, in file order) against the native contract of `profile`. */
export function checkNativeTrace(records: readonly unknown[], profile: NativeProfile, options: NativeCheckOptions = {}): NativeCheckResult {
  const replay = new NativeReplay(profile, options.max_admission_attempts);
  replay.violations.push(...(options.line_errors ?? []));
  records.forEach((record, index) => replay.record(record, index));
  return replay.finish();
}

/** The profile a trace's session.updated grant states (native_unit_ms + output_audio_format.rate), if it matches one. */
export function grantedProfile(records: readonly unknown[]): NativeProfile | undefined {
  for (const record of records) {
    const event = isObject(record) && pyGet(record, 'direction') === 'receive' ? pyGet(record, 'event') : null;
    if (!isObject(event) || pyGet(event, 'type') !== 'session.updated') continue;
    const granted = dig(event, 'session', 'sglang', 'granted');
    if (!isObject(granted)) return undefined;
    return nativeProfileOf(pyGet(granted, 'native_unit_ms'), dig(granted, 'output_audio_format', 'rate'));
  }
  return undefined;
}

export interface ParsedTraceLines {
  /** One value per JSON line, in file order. */
  records: unknown[];
  /** One message per line that is not JSON, naming its 1-based line number. */
  errors: string[];
}

const JSON_BLANK = /^[ \t\r]*$/;

/**
 * Splits a JSONL trace into records. Lines are read as Python's `json.loads` reads them, because
 * that is what the oracle sees: NaN and Infinity are accepted (the checker then rejects them), and
 * an integer written as a float (`0.0`, `1e2`) is remembered as a float, which JSON.parse forgets.
 * Blank lines are skipped.
 */
export function parseTraceLines(text: string): ParsedTraceLines {
  const records: unknown[] = [];
  const errors: string[] = [];
  text.split('\n').forEach((rawLine, index) => {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (JSON_BLANK.test(line)) return;
    try {
      records.push(new PythonJsonReader(line).read());
    } catch (error) {
      errors.push(`line ${index + 1} is not JSON: ${(error as Error).message}`);
    }
  });
  return { records, errors };
}
