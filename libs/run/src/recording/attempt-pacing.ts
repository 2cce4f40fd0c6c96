import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeSamples, encodeSamples, samplesFileOf, type SampleStore, type SamplesFile, type SessionSampleColumns } from '@duplex-bench/metrics';
import type { SampleResult } from './sample-results';
import { notValid, RunFileError, sessionDir, sessionFile } from '@duplex-bench/results';

/** Writes the packets of a sample's attempt that just ended, one session in the `samples.msgpack` layout; returns its path relative to `dir`. */
export async function writeAttemptPacing(dir: string, sample_id: string, store: SampleStore, packet_ms: number): Promise<string | null> {
  const columns = store.sessionColumns(sample_id);
  if (!columns || columns.seq.length === 0) return null;
  // Relative to the run directory: the record keeps where its packets are.
  const path = sessionFile('', sample_id, 'pacing');
  await mkdir(sessionDir(dir, sample_id), { recursive: true });
  await writeFile(join(dir, path), encodeSamples(samplesFileOf([columns], packet_ms)));
  return path;
}

/** The packets of the attempts the stored records come from, pooled; `missing` counts records with no packet file. */
export async function keptPacing(dir: string, kept: SampleResult[], packet_ms: number): Promise<{ file: SamplesFile; missing: number }> {
  const sessions: SessionSampleColumns[] = [];
  let missing = 0;
  for (const r of kept) {
    if (!r.pacing_file) {
      missing++;
      continue;
    }
    const path = join(dir, r.pacing_file);
    const bytes = await readFile(path);
    let file: SamplesFile;
    try {
      file = decodeSamples(bytes);
    } catch (err) {
      throw new RunFileError(path, notValid('msgpack', err));
    }
    for (const s of file.sessions) sessions.push({ ...s, id: r.sample_id });
  }
  return { file: samplesFileOf(sessions, packet_ms), missing };
}
