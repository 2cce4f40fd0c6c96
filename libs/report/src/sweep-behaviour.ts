import { basename, join } from 'node:path';
import { SLO_FIGURES, type SweepPoint } from '@duplex-bench/experiments';
import { readJsonFile, runFile, type RunSummary } from '@duplex-bench/results';

/** A behaviour figure of a conversation sweep against the session count: each count's value in every run. */
export interface SweepBehaviourFigure {
  /** The figure's SLO name (`response_latency_p95_ms`), and what it is. */
  figure: string;
  what: string;
  unit: 'ms' | 'fraction';
  /** The run's own origin of the figure (its summary's behaviour.measurement_origin). */
  origin: string;
  /** Per tested count, per run; null where a run has no value. */
  values: Array<Array<number | null>>;
  /** Rates: per count, the 95% Wilson interval widest over its runs. */
  ci95: Array<[number, number] | null> | null;
}

const FIGURES: Array<{ figure: string; unit: 'ms' | 'fraction'; origin: string; ci?: (s: RunSummary) => [number, number] | null | undefined }> = [
  { figure: 'response_latency_p95_ms', unit: 'ms', origin: 'response_latency_ms' },
  { figure: 'stop_latency_p95_ms', unit: 'ms', origin: 'stop_latency_ms' },
  { figure: 'pause_takeover_rate', unit: 'fraction', origin: 'pause_takeover_rate', ci: (s) => s.behaviour?.pause_takeover_rate.ci95 },
  { figure: 'backchannel_yield_rate', unit: 'fraction', origin: 'backchannel_yield_rate', ci: (s) => s.behaviour?.backchannel_yield_rate.ci95 },
];

/** Each behaviour figure per count and run, from the runs' summaries; empty when no run carries a behaviour block. */
export function behaviourFigures(summaries: Array<Array<RunSummary | null>>): SweepBehaviourFigure[] {
  const withBlock = summaries.flat().filter((s): s is RunSummary => s?.behaviour !== undefined);
  if (withBlock.length === 0) return [];
  return FIGURES.map((f) => {
    const read = SLO_FIGURES[f.figure].read;
    return {
      figure: f.figure,
      what: SLO_FIGURES[f.figure].what,
      unit: f.unit,
      origin: withBlock.find((s) => s.behaviour?.measurement_origin[f.origin])?.behaviour?.measurement_origin[f.origin] ?? '',
      values: summaries.map((runs) => runs.map((s) => (s ? (read(s) ?? null) : null))),
      ci95: f.ci
        ? summaries.map((runs) => {
            const cis = runs.flatMap((s) => (s && f.ci ? [f.ci(s)] : [])).filter((c): c is [number, number] => Array.isArray(c));
            return cis.length === 0 ? null : [Math.min(...cis.map((c) => c[0])), Math.max(...cis.map((c) => c[1]))];
          })
        : null,
    };
  });
}

/** A sweep run's summary: in its directory beside sweep.json (the sweep may have been moved), else where the sweep wrote it. */
async function runSummary(sweepDir: string, runDir: string): Promise<RunSummary | null> {
  const read = (dir: string) => readJsonFile<RunSummary>(runFile(dir, 'summary'));
  if (!runDir) return null;
  return (await read(join(sweepDir, basename(runDir)))) ?? (await read(runDir));
}

/** The behaviour figures of the sweep in `dir`, its points in order. */
export async function loadSweepBehaviour(dir: string, points: SweepPoint[]): Promise<SweepBehaviourFigure[]> {
  return behaviourFigures(await Promise.all(points.map((p) => Promise.all(p.runs.map((r) => runSummary(dir, r.dir))))));
}
