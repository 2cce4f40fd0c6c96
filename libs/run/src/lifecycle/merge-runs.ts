import { mkdir } from 'node:fs/promises';
import { UsageError } from '@duplex-bench/cli';
import type { HttpSummary } from '@duplex-bench/http-load';
import { readRunRecord, buildMergedSummary, mergeDuplex, mergeLegacy, pooledDuplexSessions, readRunForMerge, RunDirError, runDirsOfAll, runFile, shiftRun, vllmOmniFigures, readJsonFile, type LegacyFigures, type RunSummary, type VideoFigures, writeRunFile } from '@duplex-bench/results';
import { lineUpClocks, readRunClocks, type ClockLineup } from '../clock-lineup';
import { verdictOf, withVerdict, type RunVerdict } from '../verdict';
import { exitOf } from './exit-status';
import type { RenderMerged } from './launch-sessions';

/** How runs are merged: `merge`'s flags. */
export interface MergeOptions {
  output: string;
  max_clock_uncertainty_ms: number;
  timeline: 'auto' | 'reference';
}

/** The human lines of a merge: realtime runs (`merged`) or HTTP runs (`http`), the verdict last. */
export interface RenderMerge {
  merged: RenderMerged;
  http(summary: HttpSummary, output: string, v: RunVerdict): string;
}

type MergeIo = { stdout: { write(s: string): unknown }; stderr?: { write(s: string): unknown }; emit?(summary: unknown): void };

type PartBlocks = { video?: VideoFigures; legacy?: LegacyFigures; vllm_omni?: { playback_ack_too_late?: number; playback_ack_after_end?: number } };

/**
 * The dialect's own blocks of runs pooled (`merge`, and `run --processes` over its children): the
 * vLLM-Omni block when every part spoke it, the legacy block likewise, the camera frames of any.
 * `parts` are the runs' summaries as read (their blocks); missing ones are read here.
 */
export async function pooledDialectBlocks(dirs: string[], parts?: PartBlocks[]): Promise<Pick<RunSummary, 'vllm_omni' | 'legacy' | 'video'>> {
  const read = parts ?? (await Promise.all(dirs.map(async (d) => (await readJsonFile<PartBlocks>(runFile(d, 'summary'))) ?? {})));
  const out: Pick<RunSummary, 'vllm_omni' | 'legacy' | 'video'> = {};
  const protocols = await Promise.all(dirs.map(runProtocolOf));
  if (protocols.length > 0 && protocols.every((p) => p === 'vllm-omni')) {
    const vllm = vllmOmniFigures(await pooledDuplexSessions(dirs));
    // The refused acks are counted per session from its events, which duplex_metrics.json does not keep: the parts' counts, summed.
    if (vllm) {
      const sum = (pick: (b: NonNullable<PartBlocks['vllm_omni']>) => number | undefined) => read.reduce((n, p) => n + ((p.vllm_omni && pick(p.vllm_omni)) ?? 0), 0);
      out.vllm_omni = { ...vllm, playback_ack_too_late: sum((b) => b.playback_ack_too_late), playback_ack_after_end: sum((b) => b.playback_ack_after_end) };
    }
  }
  if (protocols.length > 0 && protocols.every((p) => p === 'sglang-legacy')) {
    const legacy = await mergeLegacy(dirs, read.map((p) => p.legacy));
    if (legacy) out.legacy = legacy;
  }
  const video = mergedVideo(read.map((p) => p.video));
  if (video) out.video = video;
  return out;
}

/** Runs merged into one (`merge DIR… --output OUT`): pooled summary.json and duplex_metrics.json under `output`. Returns the exit status. */
export async function mergeRuns(given: string[], flags: MergeOptions, io: MergeIo, render: RenderMerge): Promise<number> {
  if (given.length === 0) throw new UsageError('probe merge needs at least one run directory');
  // A sharded run's folder (shard-*/) or a launched run's (p*/) stands for the runs in it.
  let dirs: string[];
  try {
    dirs = await runDirsOfAll(given);
  } catch (err) {
    if (err instanceof RunDirError) throw new UsageError(err.message);
    throw err;
  }
  const parts = await Promise.all(dirs.map(async (d) => (await readJsonFile<PartBlocks & { kind?: string }>(runFile(d, 'summary'))) ?? {}));
  const kinds = parts.map((p) => p.kind);
  if (kinds.some((k) => k === 'http')) {
    if (!kinds.every((k) => k === 'http')) throw new UsageError('probe merge takes runs of one kind: these mix http runs with realtime runs');
    return mergeHttpRuns(dirs, flags.output, io, render.http);
  }
  let clocks: ClockLineup;
  try {
    clocks = lineUpClocks(await Promise.all(dirs.map(readRunClocks)), flags.max_clock_uncertainty_ms, flags.timeline);
  } catch (err) {
    io.stderr?.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  // Runs of other hosts move onto the first run's clock through their offsets.
  const runs = (await Promise.all(dirs.map(readRunForMerge))).map((run, i) => shiftRun(run, clocks.runs[i].shift_s));
  const summary = { ...buildMergedSummary(dirs, runs), clocks };
  await mkdir(flags.output, { recursive: true });
  const duplex = await mergeDuplex(dirs, flags.output);
  if (duplex) summary.duplex = duplex;
  Object.assign(summary, await pooledDialectBlocks(dirs, parts));
  // This merge was not interrupted: a part that was makes the pool unqualified (exit 3), as one that left no summary.
  const v = verdictOf({ ...summary, interrupted: false, unit: 'session', completed: summary.sessions.completed, reasons: summary.sessions.incomplete_reasons });
  const written = withVerdict(summary, v);
  await writeRunFile(flags.output, 'summary', JSON.stringify(written, null, 1));
  const gates = clocks.runs.map((r) => r.gate_ms).filter((g): g is number => g !== null);
  const clockLine =
    clocks.timeline === 'one host'
      ? 'clocks: one host (one monotonic clock)'
      : `clocks: each run on the reference clock through its offset (${clocks.runs.map((r) => `${r.offset_ms} ms`).join(', ')}), uncertainty up to ±${clocks.uncertainty_ms} ms${clocks.same_clock_disagreement_ms !== undefined ? `; on their one host the mappings disagree by ${clocks.same_clock_disagreement_ms} ms` : ''}`;
  io.stdout.write(`${render.merged(summary, flags.output, v, [`${clockLine}; start gates spread ${gates.length ? (Math.max(...gates) - Math.min(...gates)).toFixed(3) : '-'} ms`])}\n`);
  io.emit?.(written);
  // Lockstep parts kept no schedule on purpose: "not applicable", not a missed cadence.
  if (summary.pacing === 'lockstep' && v.verdict === 'unqualified') return 0;
  return exitOf(v);
}

/** The protocol a run's run.json states, or null. */
async function runProtocolOf(dir: string): Promise<string | null> {
  return (await readRunRecord(dir))?.protocol ?? null;
}

/** `merge` of `http` runs: histograms pooled, counts added (`mergeHttpSummaries`). */
async function mergeHttpRuns(dirs: string[], output: string, io: MergeIo, render: RenderMerge['http']): Promise<number> {
  const parts = await Promise.all(
    dirs.map(async (d) => {
      const part = await readJsonFile<HttpSummary>(runFile(d, 'summary'));
      if (!part) throw new UsageError(`${runFile(d, 'summary')}: no such file`);
      return part;
    }),
  );
  // The HTTP engine loads only to merge HTTP runs.
  const { mergeHttpSummaries } = await import('@duplex-bench/http-load');
  const summary = mergeHttpSummaries(parts);
  const v = verdictOf({ ...summary, interrupted: false, unit: 'request', completed: summary.requests.completed, reasons: summary.requests.errors });
  const written = withVerdict(summary, v);
  await mkdir(output, { recursive: true });
  await writeRunFile(output, 'summary', JSON.stringify(written, null, 1));
  io.stdout.write(`${render(summary, output, v)}\n`);
  io.emit?.(written);
  return exitOf(v);
}

/** The parts' camera frames summed (each part counted its own sessions'); null when no part sent any. */
export function mergedVideo(parts: Array<VideoFigures | undefined>): VideoFigures | null {
  const sent = parts.filter((v): v is VideoFigures => v !== undefined);
  if (sent.length === 0) return null;
  const deleted = sent.filter((v) => v.image_items_deleted !== undefined);
  return {
    ...sent[0],
    frames_sent: sent.reduce((n, v) => n + v.frames_sent, 0),
    frame_bytes: sent.reduce((n, v) => n + v.frame_bytes, 0),
    ...(deleted.length > 0 ? { image_items_deleted: deleted.reduce((n, v) => n + (v.image_items_deleted ?? 0), 0) } : {}),
  };
}
