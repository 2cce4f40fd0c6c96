import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT, Interrupts, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { runNodeScript, type RunningProcess } from '@duplex-bench/launcher';
import type { RunSummary } from '@duplex-bench/session';
import { checkSlo, DEFAULT_SLO, parseSlo, SLO_FIGURES, type SloCheck, type SloTerm } from './slo';

export const SWEEP_FLAGS = {
  url: { kind: 'string', required: true, group: 'connection', help: 'ws:// or wss:// endpoint of the realtime server', value: 'URL' },
  sessions: { kind: 'string', default: '8:512', group: 'load', help: 'session counts to search, MIN:MAX: doubling from MIN, then bisecting', value: 'MIN:MAX' },
  runs: { kind: 'int', min: 1, default: 3, group: 'load', help: 'runs per session count, each a fresh process; a count passes only when every run does', value: 'N' },
  duration: { kind: 'number', min: 0, exclusive: true, default: 30, group: 'load', help: 'audio per session in each run, seconds', value: 'S' },
  resolution: { kind: 'int', min: 1, default: 4, group: 'load', help: 'bisection stops when the last passing and first failing counts are this close, sessions', value: 'N' },
  slo: { kind: 'string', default: DEFAULT_SLO, group: 'load', help: `what each run must meet, figure<=bound joined by commas; figures: ${Object.keys(SLO_FIGURES).join(', ')}`, value: 'TERMS' },
  target: {
    kind: 'enum',
    values: ['server', 'client'],
    default: 'server',
    group: 'load',
    help: "server: how many sessions the server holds (the SLO); client: how many the probe itself holds against a mock (pacing only: a count passes when every run is qualified)",
  },
  protocol: { kind: 'enum', values: ['native', 'openai', 'vllm-omni'], default: 'native', group: 'dialect', help: "the server's dialect" },
  'run-args': { kind: 'string', default: '', group: 'dialect', help: 'further flags for every run, as one string (e.g. "--model m --packet-ms 160")', value: 'FLAGS' },
  output: { kind: 'string', required: true, group: 'output', help: 'sweep directory: sweep.json and one run directory per run; running again resumes', value: 'DIR' },
} as const;

/** How one session count fared: `client-limited` when the client missed its cadence in any run (never the server's limit). */
export type PointVerdict = 'pass' | 'fail' | 'client-limited' | 'failed-to-run';

export interface SweepRun {
  dir: string;
  code: number | null;
  qualified: boolean;
  slo: SloCheck[];
}

export interface SweepPoint {
  sessions: number;
  runs: SweepRun[];
  verdict: PointVerdict;
}

export interface SweepFile {
  format: 'duplex-bench.sweep';
  version: 1;
  settings: { url: string; target: 'server' | 'client'; protocol: string; duration_s: number; runs: number; slo: string; run_args: string };
  points: SweepPoint[];
  capacity: { sessions: number | null; range: [number | null, number | null]; limited_by: 'server' | 'client' | 'search range' | null; note: string };
  interrupted: boolean;
  measurement_origin: Record<string, string>;
}

const BIN = join(__dirname, '..', '..', '..', '..', 'bin', 'duplex-bench.js');

function verdictOf(runs: SweepRun[], target: 'server' | 'client'): PointVerdict {
  if (runs.some((r) => r.code !== 0 && r.code !== 3)) return 'failed-to-run';
  // Sweeping the client, its cadence is the thing measured: a late packet fails the count.
  if (target === 'client') return runs.every((r) => r.qualified) ? 'pass' : 'fail';
  if (runs.some((r) => !r.qualified)) return 'client-limited';
  return runs.every((r) => r.slo.every((c) => c.ok)) ? 'pass' : 'fail';
}

/** The capacity the points show: the largest passing count below the smallest failing one. */
export function capacityOf(points: SweepPoint[], min: number, max: number, target: 'server' | 'client' = 'server'): SweepFile['capacity'] {
  const passing = points.filter((p) => p.verdict === 'pass').map((p) => p.sessions);
  const failing = points.filter((p) => p.verdict === 'fail').map((p) => p.sessions);
  const limited = points.filter((p) => p.verdict === 'client-limited' || p.verdict === 'failed-to-run').map((p) => p.sessions);
  const firstFail = failing.length ? Math.min(...failing) : null;
  const firstLimited = limited.length ? Math.min(...limited) : null;
  const below = (n: number) => (firstFail === null || n < firstFail) && (firstLimited === null || n < firstLimited);
  const lastPass = passing.filter(below).length ? Math.max(...passing.filter(below)) : null;
  if (firstLimited !== null && (firstFail === null || firstLimited < firstFail)) {
    return {
      sessions: lastPass,
      range: [lastPass, null],
      limited_by: 'client',
      note: `the client missed its cadence (or a run failed) at ${firstLimited} sessions: the server held ${lastPass ?? 'no tested count'}, and its limit was not reached; spread the load over more processes (--run-args "--processes N") or hosts`,
    };
  }
  if (firstFail === null) return { sessions: lastPass, range: [lastPass, null], limited_by: 'search range', note: `every count up to ${max} passed: the capacity is at least ${lastPass}` };
  const by = target === 'client' ? 'client' : 'server';
  const what = target === 'client' ? 'the probe kept its cadence' : 'passes';
  if (lastPass === null) return { sessions: null, range: [null, firstFail], limited_by: by, note: `the smallest count, ${min}, already failed` };
  return { sessions: lastPass, range: [lastPass, firstFail], limited_by: by, note: `${what} at ${lastPass}, ${target === 'client' ? 'not' : 'fails'} at ${firstFail}` };
}

function renderTable(file: SweepFile, terms: SloTerm[]): string {
  const head = ['sessions', 'verdict', 'qualified runs', ...terms.map((t) => t.text)];
  const rows = [...file.points]
    .sort((a, b) => a.sessions - b.sessions)
    .map((p) => [
      String(p.sessions),
      p.verdict,
      `${p.runs.filter((r) => r.qualified).length} of ${p.runs.length}`,
      ...terms.map((_, i) => p.runs.map((r) => (r.slo[i]?.value === null || r.slo[i] === undefined ? '-' : String(r.slo[i].value))).join(' / ')),
    ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

async function sweep(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, SWEEP_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  const m = /^(\d+):(\d+)$/.exec(f.sessions);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < Number(m[1])) throw new UsageError(`--sessions must be MIN:MAX with 1 <= MIN <= MAX, got "${f.sessions}"`);
  const [min, max] = [Number(m[1]), Number(m[2])];
  const target = f.target as 'server' | 'client';
  // The client's own capacity is its pacing: no SLO term is checked.
  const terms = target === 'client' ? [] : parseSlo(f.slo);
  const settings: SweepFile['settings'] = { url: f.url, target, protocol: f.protocol, duration_s: f.duration, runs: f.runs, slo: f.slo, run_args: f['run-args'] };
  await mkdir(f.output, { recursive: true });
  const path = join(f.output, 'sweep.json');
  // Running again into the same directory with the same settings keeps the counts already measured.
  const earlier = await readFile(path, 'utf8').then((t) => JSON.parse(t) as SweepFile, () => null);
  const kept = earlier && JSON.stringify(earlier.settings) === JSON.stringify(settings) ? earlier.points.filter((p) => p.runs.length === f.runs) : [];
  const file: SweepFile = {
    format: 'duplex-bench.sweep',
    version: 1,
    settings,
    points: kept,
    capacity: { sessions: null, range: [null, null], limited_by: null, note: '' },
    interrupted: false,
    measurement_origin: {
      verdict: 'pass: every run was pacing-qualified and met every SLO term; fail: every run qualified, and a term failed; client-limited: a run was not pacing-qualified, so it measured the client, not the server',
      ...Object.fromEntries(terms.map((t) => [`slo ${t.figure}`, SLO_FIGURES[t.figure].what])),
    },
  };
  const save = async () => {
    file.capacity = capacityOf(file.points, min, max, target);
    await writeFile(`${path}.tmp`, JSON.stringify(file, null, 1));
    await rename(`${path}.tmp`, path);
  };
  const running: RunningProcess = { child: null };
  const signals = new Interrupts(io, 'the run in progress stops; what was measured is kept in sweep.json', () => running.child?.kill('SIGINT'));
  const extra = f['run-args'].split(/\s+/).filter(Boolean);
  const measure = async (sessions: number): Promise<PointVerdict> => {
    const done = file.points.find((p) => p.sessions === sessions);
    if (done) return done.verdict;
    const runs: SweepRun[] = [];
    for (let r = 1; r <= f.runs && !signals.interrupted; r++) {
      const dir = join(f.output, `s${sessions}-r${r}`);
      io.stderr.write(`sweep: ${sessions} sessions, run ${r} of ${f.runs}\n`);
      const args = ['--url', f.url, '--protocol', f.protocol, '--concurrency', String(sessions), '--duration', String(f.duration), '--output', dir, '--quiet', ...extra];
      const code = await runNodeScript(BIN, ['run', ...args], running);
      const summary = await readFile(join(dir, 'summary.json'), 'utf8').then((t) => JSON.parse(t) as RunSummary, () => null);
      runs.push({ dir, code, qualified: summary?.qualified === true, slo: summary ? checkSlo(terms, summary) : [] });
    }
    if (signals.interrupted) return 'failed-to-run';
    const point: SweepPoint = { sessions, runs, verdict: verdictOf(runs, target) };
    file.points.push(point);
    await save();
    io.stderr.write(`sweep: ${sessions} sessions: ${point.verdict}\n`);
    return point.verdict;
  };

  try {
    // Up by doubling while counts pass, then bisect between the last pass and the first failure.
    let pass: number | null = null;
    let fail: number | null = null;
    for (let n = min; !signals.interrupted; n = Math.min(max, n * 2)) {
      const v = await measure(n);
      if (v !== 'pass') {
        fail = v === 'fail' ? n : null;
        break;
      }
      pass = n;
      if (n >= max) break;
    }
    while (!signals.interrupted && pass !== null && fail !== null && fail - pass > f.resolution) {
      const mid = Math.round((pass + fail) / 2);
      const v = await measure(mid);
      if (v === 'pass') pass = mid;
      else if (v === 'fail') fail = mid;
      else break;
    }
    file.interrupted = signals.interrupted;
    await save();
  } finally {
    signals.dispose();
  }
  const c = file.capacity;
  io.stdout.write(
    `${renderTable(file, terms)}\n` +
      (c.sessions === null && c.limited_by !== 'search range' && c.range[1] !== null ? `capacity: below ${min} sessions (${c.note})` : `capacity: ${c.sessions ?? '-'} sessions (${c.limited_by}: ${c.note})`) +
      `\nwritten to ${path}\n`,
  );
  io.emit?.(file);
  return file.interrupted ? EXIT.interrupted : EXIT.ok;
}

export const SWEEP_COMMAND: CliCommand = {
  name: 'sweep',
  summary: 'find how many sessions a server holds: runs at doubling, then bisected, session counts until an SLO fails, never blaming the server for a client that fell behind',
  usage: '--url URL --output DIR [--sessions MIN:MAX] [--runs N] [--duration S] [--slo TERMS] [flags]',
  flags: SWEEP_FLAGS,
  json: true,
  run: sweep,
};
