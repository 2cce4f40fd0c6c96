import { readFile } from 'node:fs/promises';
import { loadOf, type SweepFile } from '@duplex-bench/experiments';
import { escapeHtml, page } from './report-html';
import { runFile } from '@duplex-bench/results';
import { loadSweepBehaviour, type SweepBehaviourFigure } from './sweep-behaviour';

/** Per SLO term: each tested count's (or rate's) value in every run (median drawn), and the bound. */
export interface SweepReportData {
  kind: 'sweep';
  title: string;
  capacity: SweepFile['capacity'];
  settings: SweepFile['settings'];
  /** What the charts are drawn against: session counts, or an arrival sweep's offered Erlangs. */
  axis: 'sessions' | 'offered Erlangs';
  /** Each point's place on the axis, in order. */
  x: number[];
  /** The capacity's place on the axis, and how it reads ("16 sessions", "8.5/s, 8.5 Erlangs"). */
  capacity_x: number | null;
  capacity_text: string;
  /** Each point as the table names it: the count, or "rate/s". */
  loads: string[];
  /** Arrival sweeps: per point the pooled blocking probability and its 95% interval, and the bound; null otherwise. */
  blocking: { max: number; values: Array<{ rate: number | null; ci95: [number, number] | null } | null> } | null;
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
  const points = [...file.points].sort((a, b) => loadOf(a) - loadOf(b));
  const arrival = file.settings.arrivals !== undefined;
  const c = file.capacity;
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
    axis: arrival ? 'offered Erlangs' : 'sessions',
    x: points.map((p) => (arrival ? (p.offered_erlangs ?? 0) : loadOf(p))),
    capacity_x: arrival ? (c.offered_erlangs ?? null) : c.sessions,
    capacity_text: arrival ? (c.rate_per_s === null || c.rate_per_s === undefined ? '-' : `${c.rate_per_s}/s, ${c.offered_erlangs ?? '-'} Erlangs offered`) : `${c.sessions ?? '-'} sessions`,
    loads: points.map((p) => (arrival ? `${p.rate_per_s}/s` : String(p.sessions))),
    blocking: file.settings.arrivals ? { max: file.settings.arrivals.max_blocking, values: points.map((p) => p.blocking_probability ?? null) } : null,
    verdicts: points.map((p) => p.verdict),
    qualified: points.map((p) => `${p.runs.filter((r) => r.qualified).length} of ${p.runs.length}`),
    terms,
    behaviour: await loadSweepBehaviour(dir, points),
    origin: file.measurement_origin,
  };
}

/** The sweep's page: the capacity first, then (an arrival sweep) blocking and each SLO figure against the offered Erlangs, else against the session count, the bound drawn. */
export function renderSweepHtml(data: SweepReportData): string {
  const c = data.capacity;
  const ok = c.limited_by === 'server' || c.limited_by === 'search range';
  const per = data.settings.arrivals ? `per rate, blocking at most ${data.settings.arrivals.max_blocking}` : `of ${data.settings.duration_s} s per count`;
  const body = `<div class="verdict ${ok ? 'ok' : 'bad'}" id="verdict">capacity: ${escapeHtml(data.capacity_text)} (${escapeHtml(String(c.limited_by))}: ${escapeHtml(c.note)})</div>
<p class="meta">Server: <code>${escapeHtml(data.settings.url)}</code>, ${escapeHtml(data.settings.protocol)}; ${data.settings.runs} run(s) ${per}; SLO <code>${escapeHtml(data.settings.slo)}</code>${data.settings.run_args ? `; run flags <code>${escapeHtml(data.settings.run_args)}</code>` : ''}</p>
<div id="charts"></div>
<h2>${data.settings.arrivals ? 'Rates' : 'Counts'} tested</h2>
<p class="origin">${escapeHtml(data.origin.verdict ?? '')}</p>
<div class="scroll"><table id="sessions"><thead></thead><tbody></tbody></table></div>`;
  return page(data.title, body, data, 'sweep-page.js');
}
