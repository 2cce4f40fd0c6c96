import { availableParallelism } from 'node:os';
import { EXIT, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { DEFAULT_SLO, parseSlo, runSweep, SLO_FIGURES, type SloTerm, type SweepFile } from '@duplex-bench/experiments';
import { experimentIo } from './experiment-io';
import { entryModule } from '@duplex-bench/launcher';
import { runFile } from '@duplex-bench/results';

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
  processes: {
    kind: 'string',
    default: '1',
    group: 'load',
    help: "probe processes per run, the count's sessions split evenly over them: N, or auto (from 1, doubled up to --max-processes whenever the client fell behind, and the count run again)",
    value: 'N|auto',
  },
  'max-processes': { kind: 'int', min: 1, group: 'load', help: 'with --processes auto: at most this many (default: the CPUs available)', value: 'N' },
  protocol: { kind: 'enum', values: ['native', 'openai', 'vllm-omni'], default: 'native', group: 'dialect', help: "the server's dialect" },
  'run-args': { kind: 'string', default: '', group: 'dialect', help: 'further flags for every run, as one string (e.g. "--model m --packet-ms 160")', value: 'FLAGS' },
  output: { kind: 'string', required: true, group: 'output', help: 'sweep directory: sweep.json and one run directory per run; running again resumes', value: 'DIR' },
} as const;

/** What each run of a sweep or comparison starts: the `duplex-bench` program (dist/duplex-bench.js when built). */
export const DUPLEX_BENCH_MODULE = entryModule(__dirname, '../duplex-bench', 'duplex-bench');

function renderTable(file: SweepFile, terms: SloTerm[]): string {
  const head = ['sessions', 'processes', 'verdict', 'qualified runs', ...terms.map((t) => t.text)];
  const rows = [...file.points]
    .sort((a, b) => a.sessions - b.sessions)
    .map((p) => [
      String(p.sessions),
      [...(p.client_limited_at_processes ?? []).map((n) => `${n} (behind)`), String(p.runs[0]?.processes ?? 1)].join(', '),
      p.verdict,
      `${p.runs.filter((r) => r.qualified).length} of ${p.runs.length}`,
      ...terms.map((_, i) => p.runs.map((r) => (r.slo[i]?.value === null || r.slo[i] === undefined ? '-' : String(r.slo[i].value))).join(' / ')),
    ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
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
  const processes: number | 'auto' = f.processes === 'auto' ? 'auto' : Number(f.processes);
  if (processes !== 'auto' && !(Number.isInteger(processes) && processes >= 1)) throw new UsageError(`--processes must be a whole number >= 1 or auto, got "${f.processes}"`);
  if (processes === 'auto' && target === 'client') throw new UsageError('--processes auto is for --target server: the client sweep measures a fixed layout (give --processes N)');
  if (f['max-processes'] !== undefined && processes !== 'auto') throw new UsageError('--max-processes goes with --processes auto');
  if (/(^|\s)--(processes|concurrency)\b/.test(f['run-args'])) throw new UsageError('--run-args may not set --processes or --concurrency: the sweep sets them');
  const settings = {
    url: f.url,
    target,
    protocol: f.protocol,
    duration_s: f.duration,
    runs: f.runs,
    slo: f.slo,
    run_args: f['run-args'],
    processes,
    max_processes: processes === 'auto' ? (f['max-processes'] ?? availableParallelism()) : processes,
  };
  const file = await runSweep({ settings, terms, min, max, resolution: f.resolution, output: f.output, script: DUPLEX_BENCH_MODULE }, experimentIo(io));
  const c = file.capacity;
  io.stdout.write(
    `${renderTable(file, terms)}\n` +
      (c.sessions === null && c.limited_by !== 'search range' && c.range[1] !== null ? `capacity: below ${min} sessions (${c.note})` : `capacity: ${c.sessions ?? '-'} sessions (${c.limited_by}: ${c.note})`) +
      `\nwritten to ${runFile(f.output, 'sweep')}\n`,
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
