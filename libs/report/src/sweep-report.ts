import { access } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { loadOf, termLabel, type SweepFile, type SweepPoint } from '@duplex-bench/experiments';
import { escapeHtml, page } from './report-html';
import { readJsonFile, runFile } from '@duplex-bench/results';
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
  /** Per point: its runs that ended early on a term they could no longer meet ("run 1 at 4.2 s: TTFP p99 ≤ 100 ms"), or null. */
  ended_early: Array<string | null>;
  /** Each point's place in the order the sweep tested them (1 first). */
  order: number[];
  /** Per point, per run: its own page, relative to the sweep's (null: the run wrote none). */
  links: Array<Array<string | null>>;
  /** The knee: the last passing and the first failing load on the axis, and the bisection's resolution; null without a failing point. */
  knee: { pass_x: number | null; fail_x: number; pass: string; fail: string; resolution: string } | null;
  /** What decided the first failing point: the terms (or blocking) it missed, as the table names them. */
  deciding: string | null;
  terms: Array<{ term: string; label: string; bound: number; values: Array<Array<number | null>>; ok: Array<Array<boolean | null>> }>;
  /** `--conversation` sweeps: each behaviour figure against the session count; empty for any other. */
  behaviour: SweepBehaviourFigure[];
  /** `--server-gauge`: each gauge's max per point (the largest over its runs), against the load. */
  gauges: Array<{ name: string; max: Array<number | null> }>;
  origin: Record<string, string>;
}

/** The sweep in `dir` (its sweep.json), or null when there is none. */
export async function loadSweepReport(dir: string): Promise<SweepReportData | null> {
  const file = await readJsonFile<SweepFile>(runFile(dir, 'sweep'));
  if (!file) return null;
  const points = [...file.points].sort((a, b) => loadOf(a) - loadOf(b));
  const arrival = file.settings.arrivals !== undefined;
  const c = file.capacity;
  const terms = (points.find((p) => p.runs[0]?.slo.length)?.runs[0].slo ?? []).map((c, i) => ({
    term: c.term,
    label: termLabel(c.term),
    bound: Number(/(-?[0-9.]+)$/.exec(c.term)?.[1]),
    values: points.map((p) => p.runs.map((r) => r.slo[i]?.value ?? null)),
    ok: points.map((p) => p.runs.map((r) => r.slo[i]?.ok ?? null)),
  }));
  const x = points.map((p) => (arrival ? (p.offered_erlangs ?? 0) : loadOf(p)));
  const name = (p: SweepPoint) => (arrival ? `${p.rate_per_s}/s` : `${p.sessions} sessions`);
  const [lastPass, firstFail] = c.range;
  const failPoint = firstFail === null ? undefined : points.find((p) => loadOf(p) === firstFail);
  const passPoint = lastPass === null ? undefined : points.find((p) => loadOf(p) === lastPass);
  const unit = arrival ? '/s' : ' sessions';
  return {
    kind: 'sweep',
    title: `duplex-bench sweep: ${dir}`,
    capacity: file.capacity,
    settings: file.settings,
    axis: arrival ? 'offered Erlangs' : 'sessions',
    x,
    capacity_x: arrival ? (c.offered_erlangs ?? null) : c.sessions,
    capacity_text: arrival ? (c.rate_per_s === null || c.rate_per_s === undefined ? '-' : `${c.rate_per_s}/s, ${c.offered_erlangs ?? '-'} Erlangs offered`) : `${c.sessions ?? '-'} sessions`,
    loads: points.map((p) => (arrival ? `${p.rate_per_s}/s` : String(p.sessions))),
    blocking: file.settings.arrivals ? { max: file.settings.arrivals.max_blocking, values: points.map((p) => p.blocking_probability ?? null) } : null,
    verdicts: points.map((p) => p.verdict),
    qualified: points.map((p) => `${p.runs.filter((r) => r.qualified).length} of ${p.runs.length}`),
    ended_early: points.map((p) => {
      const early = p.runs.flatMap((r, i) => (r.ended_early ? [`run ${i + 1} at ${r.ended_early.at_s} s: ${termLabel(r.ended_early.term)}`] : []));
      return early.length > 0 ? early.join('; ') : null;
    }),
    order: points.map((p) => file.points.indexOf(p) + 1),
    links: await Promise.all(points.map((p) => Promise.all(p.runs.map((r) => runPage(dir, r.dir))))),
    knee: failPoint
      ? {
          pass_x: passPoint ? x[points.indexOf(passPoint)] : null,
          fail_x: x[points.indexOf(failPoint)],
          pass: passPoint ? name(passPoint) : 'none',
          fail: name(failPoint),
          resolution: file.resolution === undefined ? '-' : `${file.resolution}${unit}`,
        }
      : null,
    deciding: failPoint ? decidingOf(failPoint, file.settings.arrivals?.max_blocking) : null,
    terms,
    behaviour: await loadSweepBehaviour(dir, points),
    gauges: [...new Set(points.flatMap((p) => p.runs.flatMap((r) => Object.keys(r.server_gauges ?? {}))))].map((name) => ({
      name,
      max: points.map((p) => {
        const each = p.runs.map((r) => r.server_gauges?.[name]?.max).filter((v): v is number => v !== undefined);
        return each.length > 0 ? Math.max(...each) : null;
      }),
    })),
    origin: file.measurement_origin,
  };
}

/** A run's own page beside the sweep's, as a link relative to it; null when the run wrote none. */
async function runPage(sweepDir: string, runDir: string): Promise<string | null> {
  if (!runDir) return null;
  const link = `${basename(runDir)}/report.html`;
  return access(join(sweepDir, link)).then(
    () => link,
    () => null,
  );
}

/** What failed a failing point: each term a run missed (by its readable name), or its blocking. */
export function decidingOf(p: SweepPoint, maxBlocking?: number): string {
  // Per term, the values of the runs that missed it.
  const missed = new Map<string, string[]>();
  const early = p.runs.filter((r) => r.ended_early).map((r) => `${termLabel(r.ended_early?.term ?? '')} (ended the run at ${r.ended_early?.at_s} s)`);
  for (const r of p.runs) for (const c of r.slo) if (!c.ok) missed.set(c.term, [...(missed.get(c.term) ?? []), c.value === null ? 'no such figure' : String(c.value)]);
  const out = [...missed].map(([term, values]) => `${termLabel(term)} (${values.join(' / ')})`);
  const b = p.blocking_probability;
  if (maxBlocking !== undefined && b?.rate !== undefined && b.rate !== null && b.rate > maxBlocking) out.unshift(`blocking probability ≤ ${maxBlocking} (${b.rate})`);
  out.unshift(...early);
  return out.length > 0 ? out.join(', ') : 'no term recorded as missed';
}

/** The sweep's page: the capacity first, then (an arrival sweep) blocking and each SLO figure against the offered Erlangs, else against the session count, the bound drawn. */
export function renderSweepHtml(data: SweepReportData): string {
  const c = data.capacity;
  const ok = c.limited_by === 'server' || c.limited_by === 'search range';
  const per = data.settings.arrivals ? `per rate, blocking at most ${data.settings.arrivals.max_blocking}` : `of ${data.settings.duration_s} s per count`;
  const decided = data.deciding ? `<div class="sub" id="deciding">decided by: ${escapeHtml(data.deciding)} at ${escapeHtml(data.knee?.fail ?? '')}</div>` : '';
  const gauges = Object.entries(c.server_gauges ?? {}).map(([name, g]) => `${name} max ${g.max}, mean ${g.mean}`);
  const g = c.per_gpu;
  if (g) gauges.unshift(g.erlangs !== undefined ? `per GPU (${g.gpus}): ${g.erlangs ?? '-'} Erlangs offered` : `per GPU (${g.gpus}): ${g.sessions ?? '-'} sessions`);
  const there = gauges.length > 0 ? `<div class="sub" id="server-gauges">at the capacity, the server's own gauges: ${escapeHtml(gauges.join('; '))}</div>` : '';
  const body = `<div class="verdict ${ok ? 'ok' : 'bad'}" id="verdict">capacity: ${escapeHtml(data.capacity_text)} (${escapeHtml(String(c.limited_by))}: ${escapeHtml(c.note)})${there}${decided}</div>
<p class="meta">Server: <code>${escapeHtml(data.settings.url)}</code>, ${escapeHtml(data.settings.protocol)}; ${data.settings.runs} run(s) ${per}; SLO <code>${escapeHtml(data.settings.slo)}</code>${data.settings.run_args ? `; run flags <code>${escapeHtml(data.settings.run_args)}</code>` : ''}</p>
<div id="charts"></div>
<h2>${data.settings.arrivals ? 'Rates' : 'Counts'} tested</h2>
<p class="origin">${escapeHtml(data.origin.verdict ?? '')}</p>
<div class="scroll"><table id="sessions"><thead></thead><tbody></tbody></table></div>`;
  return page(data.title, body, data, 'sweep-page.js');
}
