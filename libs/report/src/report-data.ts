import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ReportInputError } from './report-input-error';
import { clientTtfp, clientTtft, decodeSamples, type ResponseRecord, type SamplesFile, type TimelineFile } from '@duplex-bench/metrics';
import { checkSlo, DEFAULT_SLO, parseSlo, sloFigure } from '@duplex-bench/experiments';
import { isLate } from '@duplex-bench/pacer';
import { notValid, readJsonFile, readServerMetrics, readSessionRows, readSessionSpeech, readTurns, RunFileError, runFile, type RunRecord, type RunSummary, type SummaryVerdict, type DuplexMetricsFile } from '@duplex-bench/results';
import { behaviourReport, type BehaviourReport } from './behaviour-data';
import type { SessionSpeech, TurnRecord } from '@duplex-bench/metrics';

/** Per time bin since the first packet: |deviation| p50, p99 and max over every session's packets, and the late ones. */
export interface PacingBins {
  t_s: number[];
  p50_ms: number[];
  p99_ms: number[];
  max_ms: number[];
  late: number[];
  packets: number[];
}

/** One process's timeline, its times moved onto the report's axis (seconds since the first packet). */
export interface ProcessTimeline {
  name: string;
  t_s: number[];
  loop_lag_max_ms: number[];
  gc_pause_total_ms: number[];
  cpu_cores: number[];
  trace_backlog_bytes: number[];
  /** `--sampler`: each loop stall, s since the first packet, with its cause. */
  stalls: Array<{ t_s: number; ms: number; cause: string }>;
}

export interface SessionRow {
  process: string;
  id: string;
  completed: boolean;
  reason: string;
  message: string;
  packets: number;
  late: number;
  deviation_max_ms: number | null;
  stream_ttfp_ms: number | null;
  stream_rtf: number | null;
  responses: number;
  /** The session's first packet, s since the run's first packet (null: it sent none). */
  start_s: number | null;
  /** Its first response's TTFT on the client's clock, ms. */
  first_ttft_ms: number | null;
  output_gap_max_ms: number | null;
  playback_underruns: number | null;
}

/** One row of the report's Server table: a server figure's distribution, with its unit and origin. */
export interface ServerRow {
  group: 'responses' | 'streams' | 'behaviour' | 'arrivals' | "server's /metrics";
  figure: string;
  n: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  unit: string;
  origin: string;
}

/** The server against an SLO: each term with its figure and whether it holds. */
export interface ServerVerdict {
  slo: string;
  /** Where the terms came from: `--slo`, or the sweep's default. */
  source: string;
  terms: Array<{ term: string; value: number | null; ok: boolean; what: string }>;
  pass: boolean;
}

/** A response figure's values by origin, for its distribution. */
export type ByOrigin = Record<string, number[]>;

export interface ReportData {
  kind: 'run' | 'recording' | 'several processes';
  title: string;
  dir: string;
  verdict: { qualified: boolean; interrupted: boolean; line: string };
  sessions: { started: number; completed: number; incomplete: number; incomplete_reasons: Record<string, number> };
  packets: { sent: number; late: number };
  command: string;
  host: string;
  project: string;
  packet_ms: number;
  bin_s: number;
  pacing: PacingBins;
  /** |deviation| at chosen ranks: [ms, fraction of packets at or below]. */
  cdf: Array<[number, number]>;
  timelines: ProcessTimeline[];
  /** The server's or mock's own view, when given (`--mock-stats`). */
  server_view: { source: string; arrival_deviation_ms: Record<string, number | null>; origin: string } | null;
  responses: { ttft_ms: ByOrigin; ttfp_ms: ByOrigin; rtf: ByOrigin; tpot_ms: ByOrigin };
  stream: { ttfp_ms: number[]; rtf: number[]; output_gap_max_ms: number[]; playback_underruns: number[] };
  rows: SessionRow[];
  /** Native: the server's units, one row of figures (realtime: lag and miss rate; lockstep: its pace), with their origin. */
  units: { title: string; figures: Record<string, number | string | null>; origin: string } | null;
  /** `--video`: the camera frames the sessions sent, one row, with its origin; null without. */
  video: { title: string; figures: Record<string, number | string | null>; origin: string } | null;
  summary_origin: Record<string, string>;
  /** `--conversation`: the behaviour figures, their distributions and the sessions' timelines; null for any other run. */
  behaviour: BehaviourReport | null;
  /** `--server-metrics`: the server's own histograms, over the run and per scrape interval on the report's axis; null without. */
  server_metrics: ServerMetricsView | null;
  /** `--sampler`: every loop stall over 50 ms with its cause and evidence (the summary's block); null without. */
  stalls: RunSummary['stalls'] | null;
  /** The client's wait before it stamps a received frame (server send stamp to client receive stamp), ms; null when the server stamps none. */
  receive_delay: { p50: number | null; p99: number | null; max: number | null; n: number; origin: string } | null;
  /** The server's figures, one row each, for the first screen. */
  server_table: ServerRow[];
  /** The server against the SLO (beside the client's pacing verdict). */
  server_verdict: ServerVerdict;
}

/** The server's histograms as the report draws them: the run's figures beside the client's, and each interval's p50/p99. */
export interface ServerMetricsView {
  url: string;
  scrapes: { ok: number; failed: number; first_failure: string | null };
  figures: Array<{ name: string; unit: string; count: number; p50: number | null; p90: number | null; p99: number | null; origin: string; client: string }>;
  /** Per histogram: the end of each scrape interval (s since the first packet), its p50 and p99 in the figure's unit. */
  series: Array<{ name: string; unit: string; t_s: number[]; p50: Array<number | null>; p99: Array<number | null> }>;
  /** Scrapes that failed, s since the first packet. */
  failed_t_s: number[];
}

/** What the report reads of a summary: a run's, a recording's or a merged run's (results' types), as written with its verdict. */
type SummaryLike = Pick<RunSummary, 'qualified' | 'interrupted' | 'packet_ms' | 'packets' | 'sessions' | 'unit_lag_ms' | 'unit_miss_rate' | 'units' | 'lockstep' | 'behaviour' | 'server_metrics' | 'stalls' | 'video' | 'receive_delay_ms'> & {
  measurement_origin?: RunSummary['measurement_origin'];
  /** How the run ended (`run`, `record`, `merge` write it): `failed` when nothing completed or the run itself failed. */
  verdict?: SummaryVerdict;
  failed_reason?: string;
  /** A merged run's source directories. */
  sources?: string[];
};

/** The units row of a native run's summary, or null for a run with no units. */
export function unitsOf(s: SummaryLike): ReportData['units'] {
  if (s.lockstep) {
    const l = s.lockstep;
    return {
      title: `Lockstep pace (${l.unit_ms} ms units)`,
      figures: { 'ms/unit p50': l.ms_per_unit.p50, 'ms/unit p90': l.ms_per_unit.p90, 'ms/unit p99': l.ms_per_unit.p99, 'ms/unit max': l.ms_per_unit.max, units: l.ms_per_unit.count, 'units/s per session p50': l.units_per_s.p50, 'units/s total': l.units_per_s_total },
      origin: `${l.measurement_origin.ms_per_unit}; units/s: ${l.measurement_origin.units_per_s}`,
    };
  }
  if (!s.unit_lag_ms || !s.units) return null;
  const u = s.unit_lag_ms;
  return {
    title: `Unit lag and miss rate (${s.units.unit_ms} ms units)`,
    figures: { 'lag p50 ms': u.p50, 'lag p95 ms': u.p95, 'lag p99 ms': u.p99, 'lag max ms': u.max, units: s.units.expected, missed: s.units.missed, 'miss rate': s.unit_miss_rate ?? null },
    origin: `${s.measurement_origin?.unit_lag_ms ?? ''}; missed: ${s.measurement_origin?.unit_miss_rate ?? `lag over ${s.units.miss_threshold_ms} ms`}`,
  };
}

/** The camera row of a run that sent frames (`--video`), or null. */
export function videoOf(s: SummaryLike): ReportData['video'] {
  const v = s.video;
  if (!v) return null;
  return {
    title: `Camera frames (${v.source})`,
    figures: { 'frames sent': v.frames_sent, 'JPEG bytes': v.frame_bytes, 'bytes per frame': v.frames_sent > 0 ? Math.round(v.frame_bytes / v.frames_sent) : null, ...(v.image_items_deleted !== undefined ? { 'image items deleted': v.image_items_deleted } : {}) },
    origin: `${v.measurement_origin.frames_sent}; bytes: ${v.measurement_origin.frame_bytes}`,
  };
}

interface SessionOutcome {
  id: string;
  completed: boolean;
  reason?: string;
  message?: string;
  packets_sent: number;
  late: number;
}

/** A file of the run as JSON, null when it is not there; one that is there but does not read is BAD_RUN_FILE, named with the place. */
const readJson = async <T>(path: string): Promise<T | null> => {
  try {
    return await readJsonFile<T>(path);
  } catch (err) {
    if (err instanceof RunFileError) throw new ReportInputError('BAD_RUN_FILE', err.message);
    throw err;
  }
};

/** The directories that hold the packets: the run itself, a launched run's p0…pN, or a merged run's sources. */
async function processDirs(dir: string, summary: SummaryLike): Promise<string[]> {
  const own = await readFile(runFile(dir, 'samples')).then(
    () => true,
    () => false,
  );
  if (own) return [dir];
  if (summary.sources?.length) return summary.sources;
  const children = (await readdir(dir)).filter((n) => /^p\d+$/.test(n)).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  if (children.length === 0) throw new ReportInputError('NO_SAMPLES', `${dir}: no samples.msgpack, no process directories (p0, p1 …) and no merged sources`);
  return children.map((c) => join(dir, c));
}

/** Nearest-rank percentile of sorted values. */
const rank = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
const round3 = (v: number) => Math.round(v * 1000) / 1000;
const roundOrNull = (v: number | null) => (v === null ? null : round3(v));

/** Per-bin pacing over every session's packets, times from the first packet of all. */
export function pacingBins(files: SamplesFile[], packet_ms: number, bin_s: number): { bins: PacingBins; first_s: number } {
  let first_s = Infinity;
  for (const f of files) for (const s of f.sessions) if (s.start_s.length > 0 && s.start_s[0] < first_s) first_s = s.start_s[0];
  const byBin: number[][] = [];
  for (const f of files) {
    for (const s of f.sessions) {
      for (let i = 0; i < s.start_s.length; i++) {
        const b = Math.floor((s.start_s[i] - first_s) / bin_s);
        (byBin[b] ??= []).push(Math.abs(s.deviation_ms[i]));
      }
    }
  }
  const bins: PacingBins = { t_s: [], p50_ms: [], p99_ms: [], max_ms: [], late: [], packets: [] };
  for (let b = 0; b < byBin.length; b++) {
    const values = Float64Array.from(byBin[b] ?? []).sort();
    bins.t_s.push(round3(b * bin_s));
    bins.packets.push(values.length);
    bins.p50_ms.push(values.length ? round3(rank(values, 50)) : 0);
    bins.p99_ms.push(values.length ? round3(rank(values, 99)) : 0);
    bins.max_ms.push(values.length ? round3(values[values.length - 1]) : 0);
    bins.late.push(values.filter((v) => isLate(v, packet_ms)).length);
  }
  return { bins, first_s: Number.isFinite(first_s) ? first_s : 0 };
}

/** |deviation| at up to `points` ranks, denser in the tail, the largest always kept: [ms, fraction at or below]. */
export function deviationCdf(files: SamplesFile[], points = 1500): Array<[number, number]> {
  const all = Float64Array.from(files.flatMap((f) => f.sessions.flatMap((s) => Array.from(s.deviation_ms, Math.abs)))).sort();
  const n = all.length;
  if (n === 0) return [];
  const ranks = new Set<number>();
  for (let k = 0; k < points / 2; k++) ranks.add(Math.floor((k / (points / 2)) * (n - 1)));
  // The tail on a log scale of the fraction above: 1e-1 … 1/n.
  for (let k = 0; k < points / 2; k++) ranks.add(Math.min(n - 1, Math.floor(n - n * Math.pow(10, -(k / (points / 2)) * Math.log10(n)))));
  ranks.add(n - 1);
  return [...ranks].sort((a, b) => a - b).map((r) => [Math.max(round3(all[r]), 0.001), round3((r + 1) / n)]);
}

function byOrigin(responses: ResponseRecord[], pick: (r: ResponseRecord) => { origin: string; value: number | null }): ByOrigin {
  const out: ByOrigin = {};
  for (const r of responses) {
    const { origin, value } = pick(r);
    if (value === null || !Number.isFinite(value)) continue;
    (out[origin] ??= []).push(round3(value));
  }
  return out;
}

/** Everything a report shows of the run in `dir`, read from its files. */
export async function loadReport(dir: string, options: { mock_stats?: string; bin_s?: number; slo?: string } = {}): Promise<ReportData> {
  const bin_s = options.bin_s ?? 0.5;
  const summary = await readJson<SummaryLike>(runFile(dir, 'summary'));
  if (!summary) throw new ReportInputError('NOT_A_RUN', `${dir}: no summary.json (not a run, recording or merged run directory)`);
  const run = await readJson<RunRecord>(runFile(dir, 'run'));
  const dirs = await processDirs(dir, summary);
  const multi = dirs.length > 1;
  const files: SamplesFile[] = [];
  const timelines: ProcessTimeline[] = [];
  const rows: SessionRow[] = [];
  const responses: ResponseRecord[] = [];
  // The Server table's responses: complete sessions only, as the summary pools them.
  const completeResponses: ResponseRecord[] = [];
  const stream: ReportData['stream'] = { ttfp_ms: [], rtf: [], output_gap_max_ms: [], playback_underruns: [] };
  const timelineFiles: Array<{ name: string; file: TimelineFile }> = [];
  const conversations: Array<{ process: string; turns: TurnRecord[]; speech: SessionSpeech[] }> = [];
  // A recording keeps one result per sample under samples/; a run keeps its sessions in sessions.jsonl.
  const recording = (await readdir(join(dir, 'samples')).catch(() => null)) !== null;

  for (const [i, d] of dirs.entries()) {
    const name = multi ? `p${i}` : '';
    let samples: SamplesFile;
    try {
      samples = decodeSamples(await readFile(runFile(d, 'samples')));
    } catch (err) {
      throw new ReportInputError('BAD_RUN_FILE', `${runFile(d, 'samples')}: ${notValid('msgpack', err)}`);
    }
    files.push(samples);
    const timeline = await readJson<TimelineFile>(runFile(d, 'timeline'));
    if (timeline) timelineFiles.push({ name: name || 'probe', file: timeline });
    const duplex = await readJson<Partial<DuplexMetricsFile>>(runFile(d, 'duplex_metrics'));
    const perSession = new Map((duplex?.duplex_session_metrics ?? []).map((m) => [m.session_id, m]));
    for (const m of perSession.values()) {
      responses.push(...(m.responses ?? []));
      if (m.completed) completeResponses.push(...(m.responses ?? []));
      if (m.stream_ttfp_ms != null) stream.ttfp_ms.push(m.stream_ttfp_ms);
      if (m.stream_rtf != null) stream.rtf.push(m.stream_rtf);
      if (m.output_gap_max_ms != null) stream.output_gap_max_ms.push(m.output_gap_max_ms);
      stream.playback_underruns.push(m.playback_underruns ?? 0);
    }
    if (summary.behaviour) conversations.push({ process: name, turns: (await readTurns(d)) ?? [], speech: (await readSessionSpeech(d)) ?? [] });
    const outcomes = recording ? await recordOutcomes(d) : await readSessionRows<SessionOutcome>(d);
    const packetsOf = new Map(samples.sessions.map((s) => [s.id, s]));
    const ids = outcomes.length > 0 ? outcomes.map((o) => o.id) : samples.sessions.map((s) => s.id);
    const outcomeOf = new Map(outcomes.map((o) => [o.id, o]));
    for (const id of ids) {
      const o = outcomeOf.get(id);
      const p = packetsOf.get(id);
      let max: number | null = null;
      let late = 0;
      if (p) {
        for (const d of p.deviation_ms) {
          const a = Math.abs(d);
          if (max === null || a > max) max = a;
          if (isLate(a, samples.packet_ms)) late++;
        }
      }
      const m = perSession.get(id);
      rows.push({
        process: name,
        id,
        completed: o?.completed ?? true,
        reason: o?.reason ?? '',
        message: o?.message ?? '',
        packets: p?.seq.length ?? o?.packets_sent ?? 0,
        late: o?.late ?? late,
        deviation_max_ms: max === null ? null : round3(max),
        stream_ttfp_ms: m?.stream_ttfp_ms ?? null,
        stream_rtf: m?.stream_rtf ?? null,
        responses: m?.responses?.length ?? 0,
        start_s: p && p.start_s.length > 0 ? p.start_s[0] : null,
        first_ttft_ms: m?.responses?.length ? roundOrNull(clientTtft(m.responses[0])) : null,
        output_gap_max_ms: m?.output_gap_max_ms ?? null,
        playback_underruns: m ? (m.playback_underruns ?? 0) : null,
      });
    }
  }
  const completedIds = new Set(rows.filter((r) => r.completed).map((r) => `${r.process}/${r.id}`));
  const { bins, first_s } = pacingBins(files, summary.packet_ms, bin_s);
  for (const r of rows) if (r.start_s !== null) r.start_s = round3(r.start_s - first_s);
  for (const { name, file } of timelineFiles) {
    timelines.push({
      name,
      t_s: file.loop_lag_max_ms.map((_, i) => round3(file.origin_s + (i + 1) * file.bin_s - first_s)),
      loop_lag_max_ms: file.loop_lag_max_ms,
      gc_pause_total_ms: file.gc_pause_total_ms,
      cpu_cores: file.cpu_cores,
      trace_backlog_bytes: file.trace_backlog_bytes,
      stalls: (file.stalls ?? []).map((st) => ({ t_s: round3(st.start_s - first_s), ms: st.ms, cause: st.cause })),
    });
  }
  const mock = options.mock_stats ? await readJson<{ arrival_deviation_ms: Record<string, number | null>; measurement_origin?: Record<string, string> }>(options.mock_stats) : null;
  if (options.mock_stats && !mock) throw new ReportInputError('NO_MOCK_STATS', `--mock-stats ${options.mock_stats}: no such file`);
  const reasons = Object.entries(summary.sessions.incomplete_reasons ?? {});
  const kind: ReportData['kind'] = multi ? 'several processes' : recording ? 'recording' : 'run';
  const out: ReportData = {
    kind,
    title: `duplex-bench ${kind}: ${dir}`,
    dir,
    verdict: verdictOf(summary),
    sessions: summary.sessions,
    packets: summary.packets,
    command: run?.command?.length ? shellLine(run.command) : '(no run.json)',
    host: run?.host ? describe(run.host) : '(no run.json)',
    project: run?.project ? describe(run.project) : '',
    packet_ms: summary.packet_ms,
    bin_s,
    pacing: bins,
    cdf: deviationCdf(files),
    timelines,
    server_view: mock
      ? { source: options.mock_stats as string, arrival_deviation_ms: mock.arrival_deviation_ms, origin: mock.measurement_origin?.arrival_deviation_ms ?? 'mock: arrival deviation' }
      : null,
    responses: {
      // Each figure by its own origin: the server's clock and the client's are never one distribution.
      ttft_ms: byOrigin(responses, (r) => ({ origin: r.ttft_origin ?? 'response.created received', value: r.ttft_ms })),
      ttfp_ms: byOrigin(responses, (r) => ({ origin: r.ttfp_origin ?? 'response.created received', value: r.ttfp_ms })),
      rtf: byOrigin(responses, (r) => ({ origin: `response.created received; audio duration: ${r.audio_duration_origin}`, value: r.rtf })),
      tpot_ms: byOrigin(responses, (r) => ({ origin: r.tpot_origin, value: r.tpot_ms })),
    },
    stream,
    rows,
    units: unitsOf(summary),
    video: videoOf(summary),
    summary_origin: { ...(summary.measurement_origin ?? {}), incomplete_reasons: reasons.map(([k, n]) => `${k} ${n}`).join(', ') },
    behaviour: summary.behaviour ? behaviourReport(summary.behaviour, conversations, (process, id) => completedIds.has(`${process}/${id}`)) : null,
    server_metrics: summary.server_metrics ? await serverMetricsView(dir, summary.server_metrics, first_s) : null,
    stalls: summary.stalls ?? null,
    receive_delay: summary.receive_delay_ms
      ? { p50: summary.receive_delay_ms.p50, p99: summary.receive_delay_ms.p99, max: summary.receive_delay_ms.max, n: summary.receive_delay_ms.count, origin: summary.measurement_origin?.receive_delay_ms ?? '' }
      : null,
    server_table: [],
    server_verdict: serverVerdict(summary, options.slo),
  };
  out.server_table = serverTable(summary, completeResponses, rows, out.server_metrics);
  return out;
}

/** A command line as a shell reads it back: arguments quoted only where they need it. */
export function shellLine(argv: string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The server against `slo` (default: the sweep's), each term's figure read from the summary. */
export function serverVerdict(summary: SummaryLike, slo?: string): ServerVerdict {
  const text = slo ?? DEFAULT_SLO;
  const checks = checkSlo(parseSlo(text), summary as RunSummary);
  return {
    slo: text,
    source: slo ? '--slo' : "the sweep's default SLO (give report --slo to choose)",
    terms: checks.map((c) => ({ term: c.term, value: c.value, ok: c.ok, what: sloFigure(c.term.replace(/\s*(<=|>=|<|>|=).*$/, ''))?.what ?? '' })),
    pass: checks.every((c) => c.ok),
  };
}

/** Nearest-rank figures of values (as the summary's), and the largest. */
function spread(values: Array<number | null | undefined>): Pick<ServerRow, 'n' | 'p50' | 'p90' | 'p99' | 'max'> {
  const v = Float64Array.from(values.filter((x): x is number => x !== null && x !== undefined && Number.isFinite(x))).sort();
  if (v.length === 0) return { n: 0, p50: null, p90: null, p99: null, max: null };
  return { n: v.length, p50: round3(rank(v, 50)), p90: round3(rank(v, 90)), p99: round3(rank(v, 99)), max: round3(v[v.length - 1]) };
}

/**
 * Every server figure of the run, one row each: per response on the client's clock (and the
 * server's own where it sent them), each session's stream window, the behaviours, the arrivals,
 * the server's /metrics. Rows with no value are left out.
 */
export function serverTable(summary: SummaryLike, responses: ResponseRecord[], rows: SessionRow[], sm: ServerMetricsView | null): ServerRow[] {
  const out: ServerRow[] = [];
  const add = (group: ServerRow['group'], figure: string, unit: string, origin: string, values: Array<number | null | undefined>) => {
    const s = spread(values);
    if (s.n > 0) out.push({ group, figure, unit, origin, ...s });
  };
  const o = summary.measurement_origin ?? {};
  const byServer = (x: string) => x === 'server response_request_metrics';
  add('responses', 'TTFT', 'ms', 'client: response.created received to the first text or transcript delta', responses.map(clientTtft));
  add('responses', 'TTFT', 'ms', "server: its own response_request_metrics", responses.filter((r) => byServer(r.ttft_origin)).map((r) => r.ttft_ms));
  add('responses', 'TTFP', 'ms', 'client: response.created received to the first audio delta', responses.map(clientTtfp));
  add('responses', 'TTFP', 'ms', "server: its own response_request_metrics", responses.filter((r) => byServer(r.ttfp_origin)).map((r) => r.ttfp_ms));
  add('responses', 'RTF', 'ratio', 'client: response.created received to the last audio delta, over the audio duration', responses.map((r) => r.rtf));
  add('responses', 'TPOT', 'ms', 'client: elapsed over the server-sent token counts', responses.filter((r) => r.tpot_origin !== 'server stage 0 vllm_tpot_ms').map((r) => r.tpot_ms));
  add('responses', 'TPOT', 'ms', "server: stage 0's vllm_tpot_ms", responses.filter((r) => r.tpot_origin === 'server stage 0 vllm_tpot_ms').map((r) => r.tpot_ms));
  add('responses', 'longest output gap per response', 'ms', 'client: longest wait between two audio deltas of one response', responses.map((r) => r.max_output_gap_ms));
  const complete = rows.filter((r) => r.completed);
  add('streams', 'stream TTFP per session', 'ms', 'client: input start (send of packet 0) to the first audio received', complete.map((r) => r.stream_ttfp_ms));
  add('streams', 'stream RTF per session', 'ratio', 'client: input start to the last audio over all emitted audio; includes the concurrent input', complete.map((r) => r.stream_rtf));
  add('streams', 'longest output gap per session', 'ms', o.output_gap_max_ms ?? 'client: longest wait between two audio deltas', complete.map((r) => r.output_gap_max_ms));
  add('streams', 'playback underruns per session', 'count', o.playback_underruns ?? 'client: simulated player, 80 ms prebuffer, running dry', complete.filter((r) => r.playback_underruns !== null).map((r) => r.playback_underruns));
  const b = summary.behaviour;
  if (b) {
    const lat = (name: string, l: { count: number; p50: number | null; p90: number | null; p99: number | null; max: number | null }, origin: string) => {
      if (l.count > 0) out.push({ group: 'behaviour', figure: name, n: l.count, p50: l.p50, p90: l.p90, p99: l.p99, max: l.max, unit: 'ms', origin });
    };
    const bo = (b as { measurement_origin?: Record<string, string> }).measurement_origin ?? {};
    lat('response latency', b.response_latency_ms, bo.response_latency_ms ?? 'client');
    lat('stop latency', b.stop_latency_ms, bo.stop_latency_ms ?? 'client');
    lat('cancel latency', b.cancel_latency_ms, bo.cancel_latency_ms ?? 'client');
    for (const [name, r] of [['pause takeover rate', b.pause_takeover_rate], ['backchannel yield rate', b.backchannel_yield_rate]] as const) {
      if (r.count > 0) out.push({ group: 'behaviour', figure: name, n: r.count, p50: r.rate, p90: null, p99: null, max: null, unit: `fraction${r.ci95 ? ` (95% ${r.ci95[0]}–${r.ci95[1]})` : ''}`, origin: bo[name.replace(/ /g, '_')] ?? 'client' });
    }
  }
  const a = (summary as { arrivals?: RunSummary['arrivals'] }).arrivals;
  if (a) {
    const bp = a.blocking_probability;
    out.push({ group: 'arrivals', figure: 'blocking probability', n: a.arrived - a.client_skipped, p50: bp.rate, p90: null, p99: null, max: null, unit: `fraction${bp.ci95 ? ` (95% ${bp.ci95[0]}–${bp.ci95[1]})` : ''}`, origin: a.measurement_origin.blocking_probability ?? 'blocked / (arrived - client_skipped)' });
    for (const [name, l] of [['connect', a.connect_ms], ['handshake', a.handshake_ms]] as const) {
      if (l.count > 0) out.push({ group: 'arrivals', figure: `${name} latency`, n: l.count, p50: l.p50, p90: l.p90, p99: l.p99, max: l.max, unit: 'ms', origin: a.measurement_origin[`${name}_ms`] ?? 'client: from the intended start' });
    }
  }
  for (const f of sm?.figures ?? []) if (f.count > 0) out.push({ group: "server's /metrics", figure: f.name, n: f.count, p50: f.p50, p90: f.p90, p99: f.p99, max: null, unit: f.unit, origin: f.origin });
  return out;
}

/** The summary's server figures, and server_metrics.jsonl's intervals moved onto the report's axis. */
export async function serverMetricsView(dir: string, m: NonNullable<RunSummary['server_metrics']>, first_s: number): Promise<ServerMetricsView> {
  const rows = (await readServerMetrics(dir)) ?? [];
  const t = (t_s: number) => round3(t_s - first_s);
  const names = Object.keys(m.histograms);
  const scale = (name: string) => (m.histograms[name].unit === 'ms' ? 1000 : 1);
  const at = (v: number | null | undefined, name: string) => (v === null || v === undefined ? null : round3(v * scale(name)));
  return {
    url: m.url,
    scrapes: { ok: m.scrapes.ok, failed: m.scrapes.failed, first_failure: m.scrapes.first_failure },
    figures: names.map((name) => {
      const h = m.histograms[name];
      const c = h.client;
      return {
        name,
        unit: h.unit,
        count: h.count,
        p50: h.p50,
        p90: h.p90,
        p99: h.p99,
        origin: h.measurement_origin,
        client: c ? `${c.figure}: p50 ${c.p50 ?? '-'} p99 ${c.p99 ?? '-'} ${c.unit} (n ${c.count}); ${c.measurement_origin}` : '-',
      };
    }),
    series: names.map((name) => {
      const intervals = rows.filter((r) => r.ok && r.since_previous?.[name]);
      return {
        name,
        unit: m.histograms[name].unit,
        t_s: intervals.map((r) => t(r.t_s)),
        p50: intervals.map((r) => at(r.since_previous?.[name].p50, name)),
        p99: intervals.map((r) => at(r.since_previous?.[name].p99, name)),
      };
    }),
    failed_t_s: rows.filter((r) => !r.ok).map((r) => t(r.t_s)),
  };
}

function describe(o: object): string {
  return Object.entries(o)
    .filter(([, v]) => v !== null && typeof v !== 'object')
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
}

/** A recording's per-sample outcomes, from samples/<id>.json. */
async function recordOutcomes(dir: string): Promise<SessionOutcome[]> {
  const names = (await readdir(join(dir, 'samples'))).filter((n) => n.endsWith('.json')).sort();
  const out: SessionOutcome[] = [];
  for (const n of names) {
    const r = (await readJson<SessionOutcome & { sample_id: string }>(join(dir, 'samples', n))) as SessionOutcome & { sample_id: string };
    out.push({ id: r.sample_id, completed: r.completed, reason: r.reason, message: r.message, packets_sent: r.packets_sent, late: r.late });
  }
  return out;
}

/**
 * The page's first line, as the probe printed it: a run that measured nothing is `FAILED` whatever
 * its pacing (its summary's `verdict`), then interrupted, then the pacing verdict.
 */
export function verdictOf(summary: SummaryLike): ReportData['verdict'] {
  const l = summary.packets.late;
  const line =
    summary.verdict === 'failed'
      ? `FAILED: ${summary.failed_reason ?? 'no session completed'}`
      : summary.interrupted
        ? 'INTERRUPTED: a partial run, not a server measurement'
        : summary.qualified
          ? 'QUALIFIED: every packet within one packet interval of its schedule; this run measures the server'
          : `UNQUALIFIED: ${l} late packet(s)${summary.packets.sent === 0 ? ', no packet sent' : ''}; the client missed its cadence, so this run is not a server measurement`;
  return { qualified: summary.qualified && summary.verdict !== 'failed', interrupted: summary.interrupted, line };
}
