import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EXIT, parseFlags, UsageError, type RunIo } from '@duplex-bench/cli';
import { loadOf, parseSlo, runSweep, type SloTerm, type SweepFile } from '@duplex-bench/experiments';
import { experimentIo } from './experiment-io';
import { entryModule, startBuiltinMock } from '@duplex-bench/launcher';
import { builtinMockArgs } from '@duplex-bench/run';
import { runFile } from '@duplex-bench/results';
import { SWEEP_FLAGS } from './sweep-flags';

/** What each run of a sweep or comparison starts: the `duplex-bench` program (dist/duplex-bench.js when built). */
export const DUPLEX_BENCH_MODULE = entryModule(__dirname, '../duplex-bench', 'duplex-bench');

function renderTable(file: SweepFile, terms: SloTerm[]): string {
  const arrival = file.settings.arrivals !== undefined;
  const head = [...(arrival ? ['rate/s', 'Erlangs', 'blocking (95%)'] : ['sessions', 'processes']), 'verdict', 'qualified runs', ...terms.map((t) => t.text)];
  const blocking = (p: SweepFile['points'][number]) => {
    const b = p.blocking_probability;
    return b && b.rate !== null ? `${b.rate} (${b.ci95 ? b.ci95.join('..') : '-'})` : '-';
  };
  const rows = [...file.points]
    .sort((a, b) => loadOf(a) - loadOf(b))
    .map((p) => [
      ...(arrival
        ? [String(p.rate_per_s), String(p.offered_erlangs ?? '-'), blocking(p)]
        : [String(p.sessions), [...(p.client_limited_at_processes ?? []).map((n) => `${n} (behind)`), String(p.runs[0]?.processes ?? 1)].join(', ')]),
      `${p.verdict}${p.runs.some((r) => r.ended_early) ? ' (ended early)' : ''}`,
      `${p.runs.filter((r) => r.qualified).length} of ${p.runs.length}`,
      ...terms.map((_, i) => p.runs.map((r) => (r.slo[i]?.value === null || r.slo[i] === undefined ? '-' : String(r.slo[i].value))).join(' / ')),
    ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

/** "per GPU (8): 6 sessions (in 6..7)" or "per GPU (8): 4.5 Erlangs offered (in 4.5..5.25)". */
export function perGpuText(g: NonNullable<SweepFile['capacity']['per_gpu']>): string {
  const range = (r: [number | null, number | null] | undefined) => (r ? ` (in ${r[0] ?? '-'}..${r[1] ?? '-'})` : '');
  return g.erlangs !== undefined ? `per GPU (${g.gpus}): ${g.erlangs ?? '-'} Erlangs offered${range(g.erlangs_range)}` : `per GPU (${g.gpus}): ${g.sessions ?? '-'} sessions${range(g.sessions_range)}`;
}

/** An arrival sweep's capacity: the largest passing rate and the Erlangs it offered. */
function arrivalCapacityLine(c: SweepFile['capacity'], min: number): string {
  if (c.rate_per_s === null || c.rate_per_s === undefined) return c.limited_by !== 'search range' && c.range[1] !== null ? `capacity: below ${min}/s (${c.note})` : `capacity: - (${c.limited_by}: ${c.note})`;
  return `capacity: ${c.rate_per_s} sessions/s, ${c.offered_erlangs ?? '-'} Erlangs offered (${c.limited_by}: ${c.note})`;
}

/** A sweep's lines: its points in load order, its capacity (or the range it lies below), and where sweep.json is. */
export function renderSweep(file: SweepFile, terms: SloTerm[], min: number, output: string): string {
  const c = file.capacity;
  const below = c.sessions === null && c.limited_by !== 'search range' && c.range[1] !== null;
  const gauges = Object.entries(c.server_gauges ?? {}).map(([name, g]) => `${name} max ${g.max}, mean ${g.mean}`);
  if (c.per_gpu) gauges.unshift(perGpuText(c.per_gpu));
  const capacity = `${file.settings.arrivals !== undefined ? arrivalCapacityLine(c, min) : below ? `capacity: below ${min} sessions (${c.note})` : `capacity: ${c.sessions ?? '-'} sessions (${c.limited_by}: ${c.note})`}${gauges.length > 0 ? `; there: ${gauges.join('; ')}` : ''}`;
  return `${renderTable(file, terms)}\n${capacity}\nwritten to ${runFile(output, 'sweep')}`;
}

/** `sweep`: the largest session count that meets the SLO, counting only pacing-qualified runs. */
export async function sweepCommand(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, SWEEP_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f.sessions !== undefined && f['arrival-rate'] !== undefined) throw new UsageError('--sessions and --arrival-rate are two searches: give one');
  const arrival = f['arrival-rate'] !== undefined;
  let min: number;
  let max: number;
  if (arrival) {
    const r = /^([0-9]*\.?[0-9]+):([0-9]*\.?[0-9]+)$/.exec(f['arrival-rate'] ?? '');
    if (!r || !(Number(r[1]) > 0) || Number(r[2]) < Number(r[1])) throw new UsageError(`--arrival-rate must be MIN:MAX sessions/s with 0 < MIN <= MAX, got "${f['arrival-rate']}"`);
    [min, max] = [Number(r[1]), Number(r[2])];
    if (f.target === 'client') throw new UsageError('--arrival-rate searches the server\'s offered load: it goes with --target server');
    if (f.processes !== '1' || f['max-processes'] !== undefined) throw new UsageError('--arrival-rate runs in one process: no --processes or --max-processes');
    if (/(^|\s)--(arrival-rate|seed)\b/.test(f['run-args'])) throw new UsageError('--run-args may not set --arrival-rate or --seed: the sweep sets them (give --seed to the sweep)');
    if (!(f['max-blocking'] <= 1)) throw new UsageError(`--max-blocking is a probability, at most 1, got ${f['max-blocking']}`);
  } else {
    if (f['rate-resolution'] !== undefined) throw new UsageError('--rate-resolution goes with --arrival-rate (--resolution bisects session counts)');
    const sessions = f.sessions ?? '8:512';
    const m = /^(\d+):(\d+)$/.exec(sessions);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < Number(m[1])) throw new UsageError(`--sessions must be MIN:MAX with 1 <= MIN <= MAX, got "${sessions}"`);
    [min, max] = [Number(m[1]), Number(m[2])];
  }
  const target = f.target as 'server' | 'client';
  // The client's own capacity is its pacing: no SLO term is checked.
  const terms = target === 'client' ? [] : parseSlo(f.slo);
  const processes: number | 'auto' = f.processes === 'auto' ? 'auto' : Number(f.processes);
  if (processes !== 'auto' && !(Number.isInteger(processes) && processes >= 1)) throw new UsageError(`--processes must be a whole number >= 1 or auto, got "${f.processes}"`);
  if (processes === 'auto' && target === 'client') throw new UsageError('--processes auto is for --target server: the client sweep measures a fixed layout (give --processes N)');
  if (f['max-processes'] !== undefined && processes !== 'auto') throw new UsageError('--max-processes goes with --processes auto');
  if (/(^|\s)--(processes|concurrency)\b/.test(f['run-args'])) throw new UsageError('--run-args may not set --processes or --concurrency: the sweep sets them');
  if (/(^|\s)--(slo|abort-on-fail|abort-grace-s)\b/.test(f['run-args'])) throw new UsageError('--run-args may not set --slo, --abort-on-fail or --abort-grace-s: give the sweep its --slo (and --run-to-end or --abort-grace-s)');
  if (f.url !== undefined && (f['mock-profile'] !== undefined || f['mock-args'] !== '')) throw new UsageError('--mock-profile and --mock-args are for a sweep without --url (the built-in mock)');
  // No --url: one built-in mock serves every run; sweep.json names it by its flags (its port changes on a resume).
  const mockArgs = f.url === undefined ? [...builtinMockArgs({ protocol: f.protocol as 'native' | 'openai' | 'vllm-omni', turn_detection: 'none', output: f.output, ...(f['mock-profile'] !== undefined ? { mock_profile: f['mock-profile'] } : {}) }), ...f['mock-args'].split(/\s+/).filter(Boolean)] : null;
  const settings = {
    url: f.url ?? `built-in mock: duplex-bench serve ${(mockArgs ?? []).filter((a, i, all) => a !== '--stats-output' && all[i - 1] !== '--stats-output').join(' ')}`,
    target,
    protocol: f.protocol,
    duration_s: f.duration,
    runs: f.runs,
    slo: f.slo,
    run_args: f['run-args'],
    processes,
    max_processes: processes === 'auto' ? (f['max-processes'] ?? availableParallelism()) : processes,
    ...(arrival ? { arrivals: { max_blocking: f['max-blocking'], seed: f.seed } } : {}),
    ...(f['run-to-end'] || target === 'client' ? {} : { abort_on_fail: { grace_s: f['abort-grace-s'] } }),
    ...(f['server-metrics'] !== undefined ? { server: { metrics_url: f['server-metrics'], gauges: f['server-gauge'] ?? [] } } : {}),
    ...(f.gpus !== undefined ? { gpus: f.gpus } : {}),
  };
  if (f['server-metrics'] === undefined && f['server-gauge']?.length) throw new UsageError('--server-gauge goes with --server-metrics');
  if (/(^|\s)--(server-metrics|server-gauge)\b/.test(f['run-args']) && f['server-metrics'] !== undefined) throw new UsageError('--run-args may not set --server-metrics or --server-gauge when the sweep sets them');
  // A tenth of MIN, kept to 0.01 sessions/s: the doubling's first step is then bisected about three times.
  const resolution = arrival ? (f['rate-resolution'] ?? Math.max(0.01, Math.round(min * 10) / 100)) : f.resolution;
  // Each run's own page, linked from the sweep's; the report's code loads once, here.
  const afterRun = async (dir: string) => (await import('@duplex-bench/report')).writeReport(dir);
  const mock = mockArgs ? await startBuiltinMock(mockArgs) : null;
  if (mock) io.stderr.write(`no --url: serving the built-in mock (${settings.url.slice('built-in mock: '.length)}) at ${mock.url}, pid ${mock.pid}, for this sweep; its stats go to ${join(f.output, 'mock.json')}\n`);
  let file: SweepFile;
  try {
    file = await runSweep({ settings, terms, min, max, resolution, output: f.output, script: DUPLEX_BENCH_MODULE, afterRun, ...(mock ? { url: mock.url } : {}) }, experimentIo(io));
  } finally {
    await mock?.stop();
  }
  io.stdout.write(`${renderSweep(file, terms, min, f.output)}\n`);
  io.emit?.(file);
  return file.interrupted ? EXIT.interrupted : EXIT.ok;
}
