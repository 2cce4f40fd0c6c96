import { readFile } from 'node:fs/promises';
import type { SweepFile } from '@duplex-bench/experiments';
import { escapeHtml, page } from './report-html';
import { runFile } from '@duplex-bench/results';
import { loadSweepBehaviour, type SweepBehaviourFigure } from './sweep-behaviour';

/** Per SLO term: each tested count's value in every run (median drawn), and the bound. */
export interface SweepReportData {
  kind: 'sweep';
  title: string;
  capacity: SweepFile['capacity'];
  settings: SweepFile['settings'];
  sessions: number[];
  verdicts: string[];
  qualified: string[];
  terms: Array<{ term: string; bound: number; values: Array<Array<number | null>> }>;
  /** `--conversation` sweeps: each behaviour figure against the session count; empty for any other. */
  behaviour: SweepBehaviourFigure[];
  origin: Record<string, string>;
}

/** The sweep in `dir` (its sweep.json), or null when there is none. */
export async function loadSweepReport(dir: string): Promise<SweepReportData | null> {
  const file = await readFile(runFile(dir, 'sweep'), 'utf8').then((t) => JSON.parse(t) as SweepFile, () => null);
  if (!file) return null;
  const points = [...file.points].sort((a, b) => a.sessions - b.sessions);
  const terms = (points.find((p) => p.runs[0]?.slo.length)?.runs[0].slo ?? []).map((c, i) => ({
    term: c.term,
    bound: Number(/(-?[0-9.]+)$/.exec(c.term)?.[1]),
    values: points.map((p) => p.runs.map((r) => r.slo[i]?.value ?? null)),
  }));
  return {
    kind: 'sweep',
    title: `duplex-bench sweep: ${dir}`,
    capacity: file.capacity,
    settings: file.settings,
    sessions: points.map((p) => p.sessions),
    verdicts: points.map((p) => p.verdict),
    qualified: points.map((p) => `${p.runs.filter((r) => r.qualified).length} of ${p.runs.length}`),
    terms,
    behaviour: await loadSweepBehaviour(dir, points),
    origin: file.measurement_origin,
  };
}

/** The sweep's page: the capacity first, then each SLO figure against the session count, the bound drawn. */
export function renderSweepHtml(data: SweepReportData): string {
  const c = data.capacity;
  const ok = c.limited_by === 'server' || c.limited_by === 'search range';
  const body = `<div class="verdict ${ok ? 'ok' : 'bad'}" id="verdict">capacity: ${c.sessions ?? '-'} sessions (${escapeHtml(String(c.limited_by))}: ${escapeHtml(c.note)})</div>
<p class="meta">Server: <code>${escapeHtml(data.settings.url)}</code>, ${escapeHtml(data.settings.protocol)}; ${data.settings.runs} run(s) of ${data.settings.duration_s} s per count; SLO <code>${escapeHtml(data.settings.slo)}</code>${data.settings.run_args ? `; run flags <code>${escapeHtml(data.settings.run_args)}</code>` : ''}</p>
<div id="charts"></div>
<h2>Counts tested</h2>
<p class="origin">${escapeHtml(data.origin.verdict ?? '')}</p>
<div class="scroll"><table id="sessions"><thead></thead><tbody></tbody></table></div>`;
  return page(data.title, body, data, 'sweep-page.js');
}
