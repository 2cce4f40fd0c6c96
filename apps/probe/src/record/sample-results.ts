import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sample } from '@duplex-bench/audio';
import type { SessionResult } from '../run/session';
import type { PostprocessSummary } from './postprocess';

/** What `record` keeps of one sample, in `samples/<id>.json`; resume reads these back. */
export interface SampleResult extends Omit<SessionResult, 'id'> {
  sample_id: string;
  subset: string;
  variant: string;
  duration_s: number;
  /** The post-processing worker's summary of the session's trace, once it has run. */
  postprocess?: PostprocessSummary;
  postprocess_error?: string;
}

export function sampleResult(sample: Sample, r: SessionResult): SampleResult {
  const rest: Partial<SessionResult> = { ...r };
  delete rest.id; // the sample id stands for it
  return { sample_id: sample.id, subset: sample.subset, variant: sample.variant, duration_s: sample.duration_s, ...(rest as Omit<SessionResult, 'id'>) };
}

/**
 * Merges a new result over a stored one, by sample id. Stored metrics are never replaced by
 * empty ones: a rerun that got no responses keeps the responses recorded before.
 */
export function mergeResult(stored: SampleResult | undefined, fresh: SampleResult): SampleResult {
  if (!stored) return fresh;
  const merged = { ...stored, ...fresh };
  if (!fresh.response_metrics && stored.response_metrics) {
    merged.response_metrics = stored.response_metrics;
    merged.responses = stored.responses;
  }
  return merged;
}

/** Every stored sample result under `dir/samples`, by sample id. */
export async function readResults(dir: string): Promise<Map<string, SampleResult>> {
  const out = new Map<string, SampleResult>();
  let names: string[];
  try {
    names = await readdir(join(dir, 'samples'));
  } catch {
    return out; // a new recording
  }
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const r = JSON.parse(await readFile(join(dir, 'samples', name), 'utf8')) as SampleResult;
    out.set(r.sample_id, r);
  }
  return out;
}

/** Writes one result whole: to a temporary name, then renamed, so an interrupted write leaves the old one. */
export async function writeResult(dir: string, r: SampleResult): Promise<void> {
  await mkdir(join(dir, 'samples'), { recursive: true });
  const path = join(dir, 'samples', `${r.sample_id}.json`);
  await writeFile(`${path}.tmp`, JSON.stringify(r));
  await rename(`${path}.tmp`, path);
}
