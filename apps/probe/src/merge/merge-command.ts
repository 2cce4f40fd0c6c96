import { parseFlags } from '@duplex-bench/cli';
import type { MergedSummary } from '@duplex-bench/results';
import { mergeRuns, verdictLine, type RunVerdict, renderBehaviour, renderDuplex, renderReceiveDelay, renderStalls } from '@duplex-bench/run';
import { renderHttpSummary } from '../http/http-command';
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
    ...renderReceiveDelay(s),
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
export function mergeCommand(argv: string[], io: { stdout: { write(s: string): unknown }; stderr?: { write(s: string): unknown }; emit?(summary: unknown): void }): Promise<number> {
  const flags = parseFlags(argv, MERGE_FLAGS);
  const options = { output: flags.output, max_clock_uncertainty_ms: flags['max-clock-uncertainty-ms'], timeline: flags.timeline as 'auto' | 'reference' };
  return mergeRuns(flags._, options, io, { merged: renderMerged, http: renderHttpSummary });
}
