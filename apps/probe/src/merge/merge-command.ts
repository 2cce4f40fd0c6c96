import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { parseFlags, UsageError } from '@duplex-bench/cli';
import { buildMergedSummary, mergeDuplex, pooledDuplexSessions, readRunForMerge, RunDirError, runDirsOfAll, shiftRun, vllmOmniFigures, type MergedSummary, runFile } from '@duplex-bench/results';
import { lineUpClocks, readRunClocks, type ClockLineup } from '@duplex-bench/run';
import { exitOf } from '@duplex-bench/run';
import { mergeHttpSummaries, type HttpSummary } from '@duplex-bench/http-load';
import { renderHttpSummary } from '../http/http-command';
import { renderBehaviour, renderDuplex, renderStalls } from '../render';
import { verdictLine, verdictOf, withVerdict, type RunVerdict } from '@duplex-bench/run';
import { MERGE_FLAGS } from './merge-flags';


/** The merged run's lines; `more` go before the last, which is the verdict (`verdictOf`). */
export function renderMerged(s: MergedSummary, output: string, v: RunVerdict, more: string[] = []): string {
  const d = s.pacing_deviation_ms;
  const f = (v: number | null) => (v === null ? '-' : `${v.toFixed(2)} ms`);
  return [
    `merged ${s.processes} processes: ${s.sessions.started} sessions, ${s.sessions.completed} completed, ${s.sessions_with_violation} with a late packet; peak overlapping streams ${s.peak_overlapping_streams}`,
    `packets: ${s.packets.sent} sent, ${s.packets.late} late; pooled |deviation| p50 ${f(d.p50)}  p99 ${f(d.p99)}  p99.9 ${f(d.p99_9)}  max ${f(d.max)}`,
    ...(s.duplex ? renderDuplex(s.duplex) : []),
    ...(s.behaviour ? renderBehaviour(s.behaviour) : []),
    ...(s.stalls ? [renderStalls(s.stalls)] : []),
    `client CPU per process (cores): ${s.cpu_cores.per_process.map((c) => c.toFixed(2)).join(', ')}${s.cpu_us_per_packet ? `; ${s.cpu_us_per_packet.toFixed(1)} µs per packet cycle` : ''}; written to ${output}`,
    ...more,
    s.pacing === 'lockstep' && v.verdict === 'unqualified'
      ? `LOCKSTEP: pacing not applicable (each unit went once the server had finished the previous one); ${s.lockstep?.units_per_s_total ?? 0} units/s total over ${s.lockstep?.units_per_s.count ?? 0} session(s)`
      : verdictLine(v, {
      interrupted: `partial run, not a server measurement; ${s.packets.late} late packet(s)`,
      qualified: 'every packet of every process within one packet interval',
      unqualified: `${s.interrupted ? 'a process was interrupted or left no summary; ' : ''}${s.packets.late} late packet(s)`,
    }),
  ].join('\n');
}

/** `probe merge DIR… --output OUT`. Returns the exit status. */
export async function mergeCommand(argv: string[], io: { stdout: { write(s: string): unknown }; stderr?: { write(s: string): unknown }; emit?(summary: unknown): void }): Promise<number> {
  const flags = parseFlags(argv, MERGE_FLAGS);
  if (flags._.length === 0) throw new UsageError('probe merge needs at least one run directory');
  // A sharded run's folder (shard-*/) or a launched run's (p*/) stands for the runs in it.
  let dirs: string[];
  try {
    dirs = await runDirsOfAll(flags._);
  } catch (err) {
    if (err instanceof RunDirError) throw new UsageError(err.message);
    throw err;
  }
  const kinds = await Promise.all(dirs.map(async (d) => (JSON.parse(await readFile(runFile(d, 'summary'), 'utf8').catch(() => '{}')) as { kind?: string }).kind));
  if (kinds.some((k) => k === 'http')) {
    if (!kinds.every((k) => k === 'http')) throw new UsageError('probe merge takes runs of one kind: these mix http runs with realtime runs');
    return mergeHttpRuns(dirs, flags.output, io);
  }
  let clocks: ClockLineup;
  try {
    clocks = lineUpClocks(await Promise.all(dirs.map(readRunClocks)), flags['max-clock-uncertainty-ms'], flags.timeline as 'auto' | 'reference');
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
  if ((await Promise.all(dirs.map(runProtocolOf))).every((p) => p === 'vllm-omni')) {
    const vllm = vllmOmniFigures(await pooledDuplexSessions(dirs));
    if (vllm) summary.vllm_omni = vllm;
  }
  // This merge was not interrupted: a part that was makes the pool unqualified (exit 3), as one that left no summary.
  const v = verdictOf({ ...summary, interrupted: false, unit: 'session', completed: summary.sessions.completed, reasons: summary.sessions.incomplete_reasons });
  const written = withVerdict(summary, v);
  await writeFile(runFile(flags.output, 'summary'), JSON.stringify(written, null, 1));
  const gates = clocks.runs.map((r) => r.gate_ms).filter((g): g is number => g !== null);
  const clockLine =
    clocks.timeline === 'one host'
      ? 'clocks: one host (one monotonic clock)'
      : `clocks: each run on the reference clock through its offset (${clocks.runs.map((r) => `${r.offset_ms} ms`).join(', ')}), uncertainty up to ±${clocks.uncertainty_ms} ms${clocks.same_clock_disagreement_ms !== undefined ? `; on their one host the mappings disagree by ${clocks.same_clock_disagreement_ms} ms` : ''}`;
  io.stdout.write(`${renderMerged(summary, flags.output, v, [`${clockLine}; start gates spread ${gates.length ? (Math.max(...gates) - Math.min(...gates)).toFixed(3) : '-'} ms`])}\n`);
  io.emit?.(written);
  // Lockstep parts kept no schedule on purpose: "not applicable", not a missed cadence.
  if (summary.pacing === 'lockstep' && v.verdict === 'unqualified') return 0;
  return exitOf(v);
}

/** The protocol a run's run.json states, or null. */
async function runProtocolOf(dir: string): Promise<string | null> {
  try {
    const run = JSON.parse(await readFile(runFile(dir, 'run'), 'utf8')) as { protocol?: unknown };
    return typeof run.protocol === 'string' ? run.protocol : null;
  } catch {
    return null;
  }
}

/** `merge` of `http` runs: histograms pooled, counts added (`mergeHttpSummaries`). */
async function mergeHttpRuns(dirs: string[], output: string, io: { stdout: { write(s: string): unknown }; emit?(summary: unknown): void }): Promise<number> {
  const parts = await Promise.all(dirs.map(async (d) => JSON.parse(await readFile(runFile(d, 'summary'), 'utf8')) as HttpSummary));
  const summary = mergeHttpSummaries(parts);
  const v = verdictOf({ ...summary, interrupted: false, unit: 'request', completed: summary.requests.completed, reasons: summary.requests.errors });
  const written = withVerdict(summary, v);
  await mkdir(output, { recursive: true });
  await writeFile(runFile(output, 'summary'), JSON.stringify(written, null, 1));
  io.stdout.write(`${renderHttpSummary(summary, output, v)}\n`);
  io.emit?.(written);
  return exitOf(v);
}
