import { runQuiet } from '../processes';
import type { ClientName, Options } from './options';
import type { RunResult } from './run-one';
import { fmtCores, fmtMb, fmtMs, fmtRatio, fmtUs, median, present } from './format';

/** "median [min–max]", or just the value when there is one run. */
export function fmtSpread(values: number[], fmt: (v: number | null) => string): string {
  if (values.length === 0) return '–';
  const m = fmt(median(values));
  return values.length === 1 ? m : `${m} [${fmt(Math.min(...values))}–${fmt(Math.max(...values))}]`;
}

export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Tables

/** Runs of one client at one session count that finished with a summary (qualified or not). */
function finished(results: RunResult[], sessions: number, client: ClientName): RunResult[] {
  return results.filter((r) => r.sessions === sessions && r.client === client && r.status !== 'failed');
}

/** "q of n", plus "(f failed)" when some runs failed. */
function qualifiedCell(results: RunResult[], sessions: number, client: ClientName): string {
  const all = results.filter((r) => r.sessions === sessions && r.client === client);
  const failed = all.filter((r) => r.status === 'failed').length;
  return `${all.filter((r) => r.status === 'qualified').length} of ${all.length}${failed ? ` (${failed} failed)` : ''}`;
}

function lateSum(results: RunResult[], sessions: number, client: ClientName): string {
  const late = present(finished(results, sessions, client).map((r) => r.late_packets));
  return late.length ? String(late.reduce((a, b) => a + b, 0)) : '–';
}

function medianOf(runs: RunResult[], pick: (r: RunResult) => number | null): number | null {
  return median(present(runs.map(pick)));
}

/** Figures come from runs that finished with a summary (qualified or not); failed runs only count in n. */
function mainTable(options: Options, results: RunResult[]): string {
  const header = [
    'client', 'sessions', 'qualified runs', 'late packets (sum)', 'p99 deviation ms, median [min–max]',
    'max deviation ms, median [min–max]', 'client CPU cores (median)', 'client CPU µs per packet cycle, median [min–max]',
    'mock CPU cores (median)', 'mock CPU cores under load (median)', 'mock CPU µs per append, median [min–max]', 'client peak RSS MiB (median)',
    ...(options.stamp_sends ? ['receive delay p99 ms, median [min–max]'] : []),
    'held-back reads, median [min–max]',
  ];
  const rows: string[][] = [];
  for (const client of options.clients) {
    for (const sessions of options.sessions) {
      const ok = finished(results, sessions, client);
      const rss_mib = medianOf(ok, (r) => (r.client_peak_rss_bytes === null ? null : r.client_peak_rss_bytes / 2 ** 20));
      rows.push([
        client, String(sessions), qualifiedCell(results, sessions, client), lateSum(results, sessions, client),
        fmtSpread(present(ok.map((r) => r.p99_deviation_ms)), fmtMs), fmtSpread(present(ok.map((r) => r.max_deviation_ms)), fmtMs),
        fmtCores(medianOf(ok, (r) => r.client_cpu_cores)), fmtSpread(present(ok.map((r) => r.client_cpu_us_per_packet)), fmtUs),
        fmtCores(medianOf(ok, (r) => r.mock_cpu_cores)), fmtCores(medianOf(ok, (r) => r.mock_cpu_cores_load)),
        fmtSpread(present(ok.map((r) => r.mock_cpu_us_per_append)), fmtUs),
        rss_mib === null ? '–' : rss_mib.toFixed(0),
        ...(options.stamp_sends ? [fmtSpread(present(ok.map((r) => r.receive_delay_p99_ms)), fmtMs)] : []),
        fmtSpread(present(ok.map((r) => r.reads_paused)), String),
      ]);
    }
  }
  return markdownTable(header, rows);
}

function find(results: RunResult[], run: number, sessions: number, client: ClientName): RunResult | undefined {
  return results.find((r) => r.run === run && r.sessions === sessions && r.client === client && r.status !== 'failed');
}

/** numerator / denominator of any figure within each run where both finished, one ratio per run. */
function pairRatios(options: Options, results: RunResult[], sessions: number, numerator: ClientName, denominator: ClientName, pick: (r: RunResult) => number | null): number[] {
  const ratios: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const a = find(results, run, sessions, numerator);
    const b = find(results, run, sessions, denominator);
    const top = a ? pick(a) : null;
    const bottom = b ? pick(b) : null;
    if (top !== null && bottom !== null && bottom > 0) ratios.push(top / bottom);
  }
  return ratios;
}

const p99 = (r: RunResult) => r.p99_deviation_ms;

/** This checkout against the baseline checkout (its probe against its own mock), same run. */
function baselineTable(options: Options, results: RunResult[]): string {
  const header = [
    'sessions', 'client µs per packet cycle: this / baseline, median [min–max]', 'mock µs per append: this / baseline, median [min–max]',
    'p99 deviation: this / baseline, median [min–max]',
    ...(options.stamp_sends ? ['receive delay p99: this / baseline, median [min–max]'] : []),
    'pairs', 'qualified runs this', 'qualified runs baseline',
  ];
  const rows = options.sessions.map((sessions) => {
    const cpu = pairRatios(options, results, sessions, 'probe', 'baseline', (r) => r.client_cpu_us_per_packet);
    return [
      String(sessions), fmtSpread(cpu, fmtRatio), fmtSpread(pairRatios(options, results, sessions, 'probe', 'baseline', (r) => r.mock_cpu_us_per_append), fmtRatio),
      fmtSpread(pairRatios(options, results, sessions, 'probe', 'baseline', p99), fmtRatio),
      ...(options.stamp_sends ? [fmtSpread(pairRatios(options, results, sessions, 'probe', 'baseline', (r) => r.receive_delay_p99_ms), fmtRatio)] : []),
      String(cpu.length), qualifiedCell(results, sessions, 'probe'), qualifiedCell(results, sessions, 'baseline'),
    ];
  });
  return markdownTable(header, rows);
}

/** probe p99 / python p99, each ratio within one run's pair, then the median over runs. */
function ratioTable(options: Options, results: RunResult[]): string {
  const header = ['sessions', 'probe p99 / python p99, median [min–max]', 'pairs', 'late packets probe', 'late packets python'];
  const rows = options.sessions.map((sessions) => {
    const ratios = pairRatios(options, results, sessions, 'probe', 'python', p99);
    return [String(sessions), fmtSpread(ratios, fmtRatio), String(ratios.length), lateSum(results, sessions, 'probe'), lateSum(results, sessions, 'python')];
  });
  return markdownTable(header, rows);
}

/** Client CPU per packet cycle of the probe over each other client's that ran (python, floor), each ratio within one run's pair. */
function cpuTable(options: Options, results: RunResult[]): string {
  const others = (['python', 'floor'] as ClientName[]).filter((c) => options.clients.includes(c));
  const cpu = (r: RunResult) => r.client_cpu_us_per_packet;
  const header = ['sessions', ...others.map((c) => `probe / ${c}, median [min–max]`), 'pairs'];
  const rows = options.sessions.map((sessions) => {
    const ratios = others.map((c) => pairRatios(options, results, sessions, 'probe', c, cpu));
    return [String(sessions), ...ratios.map((r) => fmtSpread(r, fmtRatio)), String(Math.min(...ratios.map((r) => r.length)))];
  });
  return markdownTable(header, rows);
}

/** probe-full against probe (--trace off) in the same run, plus the trace writer's figures from probe-full. */
function traceTable(options: Options, results: RunResult[]): string {
  const header = [
    'sessions', 'p99 full / p99 off, median [min–max]', 'pairs', 'late packets off', 'late packets full', 'qualified runs off', 'qualified runs full',
    'trace MB/s (median)', 'backlog peak MB (median)', 'max batch write ms (median)',
  ];
  const rows = options.sessions.map((sessions) => {
    const ratios = pairRatios(options, results, sessions, 'probe-full', 'probe', p99);
    const full = finished(results, sessions, 'probe-full');
    return [
      String(sessions), fmtSpread(ratios, fmtRatio), String(ratios.length),
      lateSum(results, sessions, 'probe'), lateSum(results, sessions, 'probe-full'),
      qualifiedCell(results, sessions, 'probe'), qualifiedCell(results, sessions, 'probe-full'),
      fmtMb(medianOf(full, (r) => r.trace_mb_per_s)), fmtMb(medianOf(full, (r) => r.trace_backlog_peak_mb)),
      fmtMs(medianOf(full, (r) => r.trace_max_batch_write_ms)),
    ];
  });
  return markdownTable(header, rows);
}

/** probe-openai against probe (native) in the same run. */
function dialectTable(options: Options, results: RunResult[]): string {
  const header = ['sessions', 'p99 openai / p99 native, median [min–max]', 'pairs', 'late packets native', 'late packets openai', 'qualified runs native', 'qualified runs openai'];
  const rows = options.sessions.map((sessions) => {
    const ratios = pairRatios(options, results, sessions, 'probe-openai', 'probe', p99);
    return [
      String(sessions), fmtSpread(ratios, fmtRatio), String(ratios.length),
      lateSum(results, sessions, 'probe'), lateSum(results, sessions, 'probe-openai'),
      qualifiedCell(results, sessions, 'probe'), qualifiedCell(results, sessions, 'probe-openai'),
    ];
  });
  return markdownTable(header, rows);
}

/** probe-conversation against probe-talk (plain streaming) against the same conversation mock, same run. */
function conversationTable(options: Options, results: RunResult[]): string {
  const header = ['sessions', 'client µs per packet cycle: conversation / plain, median [min–max]', 'p99 deviation: conversation / plain, median [min–max]', 'pairs', 'qualified runs plain', 'qualified runs conversation'];
  const rows = options.sessions.map((sessions) => {
    const cpu = pairRatios(options, results, sessions, 'probe-conversation', 'probe-talk', (r) => r.client_cpu_us_per_packet);
    return [
      String(sessions), fmtSpread(cpu, fmtRatio), fmtSpread(pairRatios(options, results, sessions, 'probe-conversation', 'probe-talk', p99), fmtRatio), String(cpu.length),
      qualifiedCell(results, sessions, 'probe-talk'), qualifiedCell(results, sessions, 'probe-conversation'),
    ];
  });
  return markdownTable(header, rows);
}

function failureLines(results: RunResult[]): string[] {
  return results
    .filter((r) => r.status === 'failed' || r.notes.length > 0)
    .map((r) => `- run ${r.run + 1}, ${r.sessions} sessions, ${r.client}: ${[r.failure, ...r.notes].filter(Boolean).join('; ')}`);
}

export function report(options: Options, results: RunResult[]): string {
  const parts = [mainTable(options, results)];
  parts.push(
    [
      'Figures are over runs that finished with a summary; failed runs count only in "qualified runs".',
      'Deviation is |send start − (origin + N × 80 ms)| as each client measured it.',
      '"mock CPU cores" is the mock\'s own figure (CPU seconds per wall second since it started, idle time included);',
      '"under load" is the mock\'s CPU seconds from client start to client exit (/proc) divided by the run duration.',
      'CPU per packet cycle is the client process\'s whole CPU seconds, start-up to exit (user + system as the kernel counted them',
      'when it was reaped: the same count for every client), over packets sent, in µs; the mock\'s is its CPU seconds under load over the appends it received.',
    ].join(' '),
  );
  if (options.clients.includes('probe') && options.clients.includes('python')) {
    parts.push('### Probe vs Python baseline, same run, same mock build', ratioTable(options, results));
    parts.push('A ratio below 1× means the probe kept tighter pacing than the Python client in the same run.');
  }
  if (options.clients.includes('probe') && (options.clients.includes('python') || options.clients.includes('floor'))) {
    parts.push('### The probe\'s CPU per packet cycle over the other clients\', same run', cpuTable(options, results));
    parts.push('Each ratio is the probe\'s whole-process CPU per packet cycle over the other client\'s in the same run (each against its own mock of the same build); the floor is tools/bench/ws-floor.ts, the least a Node client of the dialect does.');
  }
  if (options.clients.includes('probe') && options.clients.includes('probe-full')) {
    parts.push('### Full traces vs receipts only (--trace full vs --trace off)', traceTable(options, results));
    parts.push(
      [
        'A ratio above 1× means writing full traces loosened the probe\'s pacing compared with receipts only in the same run.',
        'Trace MB/s is trace bytes written (10^6 bytes per MB) divided by the run duration; backlog peak is the most trace',
        'and receipt data handed to the writer thread and not yet written; max batch write is the slowest single batch write.',
      ].join(' '),
    );
  }
  if (options.clients.includes('probe') && options.clients.includes('probe-openai')) {
    parts.push('### openai dialect vs native, same run', dialectTable(options, results));
    parts.push(
      [
        'probe-openai runs `--protocol openai` against `mock serve --protocol openai` (append-echo profile: each 80 ms unit answered at once',
        'with an audio delta and a transcript delta, turns every 5 s of input); probe runs the native dialect against the native mock',
        '(an ack, an audio delta, a text delta and a unit done per packet). A ratio above 1× means the openai run paced less tightly.',
      ].join(' '),
    );
  }
  if (options.clients.includes('probe-talk') && options.clients.includes('probe-conversation')) {
    parts.push('### A conversation vs plain streaming, same run, same model mock', conversationTable(options, results));
    parts.push(
      [
        'Both run against `serve --profile nemotron --conversation default --respond-after-ms 400 --stop-after-ms 200`;',
        'probe-talk streams silence (the mock hears no turn, so it never answers, but it streams its output units, silent, all the same: as many audio deltas as the conversation receives), probe-conversation follows `--conversation default` (it decodes every',
        "received audio delta for the playout's live estimate and hands it to the voice activity thread). A ratio above 1× is what the conversation costs.",
      ].join(' '),
    );
  }
  if (options.clients.includes('probe') && options.clients.includes('baseline')) {
    parts.push(`### This checkout vs the baseline (commit ${runQuiet('git', ['-C', options.baseline_root as string, 'rev-parse', '--short', 'HEAD']) ?? 'unknown'}), same run`, baselineTable(options, results));
    parts.push('Each run pairs this checkout\'s probe against its own mock with the baseline\'s probe against its own mock; a ratio below 1× means this checkout costs less.');
  }
  const failures = failureLines(results);
  if (failures.length) parts.push('Failed runs and notes:', failures.join('\n'));
  return parts.join('\n\n');
}

export function docTitle(clients: ClientName[]): string {
  const topics: string[] = [];
  if (clients.includes('python')) topics.push('probe vs Python baseline');
  if (clients.includes('floor')) topics.push('probe vs the Node floor');
  if (clients.includes('probe-full')) topics.push('full traces vs receipts only');
  if (clients.includes('probe-openai')) topics.push('openai dialect vs native');
  if (clients.includes('baseline')) topics.push('this checkout vs a baseline commit');
  return topics.length ? `## Pacing: ${topics.join('; ')}` : '## Pacing';
}

