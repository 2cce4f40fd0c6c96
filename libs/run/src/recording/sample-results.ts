import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sample } from '@duplex-bench/audio';
import type { SessionResult } from '@duplex-bench/session';
import type { PostprocessSummary } from './postprocess';
import { readJsonFile, RunFileError, SAMPLES_DIR, sampleRecordFile, sessionFile, type SessionFile } from '@duplex-bench/results';

/** What `record` keeps of one sample, in `samples/<id>.json`; resume reads these back. */
export interface SampleResult extends Omit<SessionResult, 'id'> {
  sample_id: string;
  subset: string;
  variant: string;
  duration_s: number;
  /** The sample's own camera (frame directory or video file) when it had one. */
  camera?: string;
  /** The post-processing worker's summary of the session's trace, once it has run. */
  postprocess?: PostprocessSummary;
  postprocess_error?: string;
  /** Every attempt at this sample, oldest first, in brief: nothing measured is dropped when a better attempt is kept. */
  attempts?: AttemptBrief[];
  /** This attempt's packets (`samples.msgpack` layout, one session), relative to the recording's directory. */
  pacing_file?: string;
}

export interface AttemptBrief {
  completed: boolean;
  reason?: string;
  message?: string;
  packets_sent: number;
  late: number;
  violation: boolean;
  responses: number;
  /** The attempt's packets, relative to the recording's directory. */
  pacing_file?: string;
}

function brief(r: SampleResult): AttemptBrief {
  const { completed, reason, message, packets_sent, late, violation, pacing_file } = r;
  return {
    completed,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    packets_sent,
    late,
    violation,
    responses: r.responses?.length ?? 0,
    ...(pacing_file ? { pacing_file } : {}),
  };
}

export function sampleResult(sample: Sample, r: SessionResult): SampleResult {
  const rest: Partial<SessionResult> = { ...r };
  delete rest.id; // the sample id stands for it
  return { sample_id: sample.id, subset: sample.subset, variant: sample.variant, duration_s: sample.duration_s, ...(sample.video ? { camera: sample.video } : {}), ...(rest as Omit<SessionResult, 'id'>) };
}

/**
 * The record a sample keeps after a new attempt, by sample id. It comes whole from one attempt,
 * never mixed: completion, pacing, response metrics, reason and post-processing belong together.
 * A complete attempt beats an incomplete one (an interrupted or failed rerun never replaces a
 * complete record, and never counts as complete); between equals the newer wins. Every attempt
 * stays listed in `attempts`.
 */
export function mergeResult(stored: SampleResult | undefined, fresh: SampleResult): SampleResult {
  const attempts = [...(stored?.attempts ?? (stored ? [brief(stored)] : [])), brief(fresh)];
  const keep = stored && stored.completed && !fresh.completed ? stored : fresh;
  return { ...keep, attempts };
}

/**
 * Every stored sample result under `dir/samples`, by sample id. A record that is not JSON, or not a
 * sample's record (an object with its `sample_id`), throws RunFileError naming the file.
 */
export async function readResults(dir: string): Promise<Map<string, SampleResult>> {
  const out = new Map<string, SampleResult>();
  let names: string[];
  try {
    names = await readdir(join(dir, SAMPLES_DIR));
  } catch {
    return out; // a new recording
  }
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const path = join(dir, SAMPLES_DIR, name);
    const r = await readJsonFile<SampleResult>(path);
    if (r === null) continue; // gone since the listing
    if (typeof r?.sample_id !== 'string') throw new RunFileError(path, 'not a sample\'s record: it has no "sample_id"');
    out.set(r.sample_id, r);
  }
  return out;
}

/**
 * Moves an earlier attempt's trace, receipts and packets aside (`trace.attempt-N.jsonl`,
 * `input-send-receipts.attempt-N.json`, `pacing.attempt-N.msgpack`) before the sample is recorded
 * again: the trace writer appends, and a trace holding two attempts would be replayed and checked
 * as one session. Returns the stored record pointing at its packets' new name, written back first.
 */
export async function keepEarlierAttempt(dir: string, stored: SampleResult): Promise<SampleResult> {
  const n = stored.attempts?.length ?? 1;
  const id = stored.sample_id;
  const move = async (file: SessionFile): Promise<boolean> => {
    try {
      await rename(sessionFile(dir, id, file), sessionFile(dir, id, file, n));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return false;
    }
  };
  await move('trace');
  await move('receipts');
  const current = sessionFile('', id, 'pacing');
  if (stored.pacing_file !== current || !(await move('pacing'))) return stored;
  const aside = sessionFile('', id, 'pacing', n);
  const moved: SampleResult = {
    ...stored,
    pacing_file: aside,
    attempts: stored.attempts?.map((a) => (a.pacing_file === current ? { ...a, pacing_file: aside } : a)),
  };
  await writeResult(dir, moved);
  return moved;
}

/** Writes one result whole: to a temporary name, then renamed, so an interrupted write leaves the old one. */
export async function writeResult(dir: string, r: SampleResult): Promise<void> {
  await mkdir(join(dir, SAMPLES_DIR), { recursive: true });
  const path = sampleRecordFile(dir, r.sample_id);
  await writeFile(`${path}.tmp`, JSON.stringify(r));
  await rename(`${path}.tmp`, path);
}
