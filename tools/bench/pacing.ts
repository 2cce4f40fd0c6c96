/**
 * Pacing benchmark: the probe and the Python baseline client, each against a fresh append-echo mock,
 * at several session counts, interleaved in the same sweep so all clients see the same machine.
 *
 *   node --import tsx tools/bench/pacing.ts [--sessions 64,256,512,1024] [--runs 3] [--duration 30]
 *        [--clients probe,python] [--out out/bench] [--write-doc docs/performance.md] [--doc-section pacing]
 *        [--python PYTHON] [--python-client FILE] [--settle 2]
 *
 * Clients: probe (receipts only, --trace off), probe-openai (the same in the openai dialect, against
 * the openai mock), probe-full (the same plus --trace full: every event goes
 * to per-session trace files through the writer thread, deleted after the summary), python (baseline).
 * Writes <out>/results.json (host, command, one record per client run) and prints markdown tables.
 * --write-doc replaces the part of the file between <!-- bench:NAME:start --> and <!-- bench:NAME:end -->
 * (NAME from --doc-section), or appends that section when the markers are missing.
 * Every wait is bounded; only processes started here are signalled, by PID; all traffic is on 127.0.0.1.
 * Exit status: 0 all runs finished (qualified or not), 1 a run failed, 2 bad usage, 130 interrupted.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const MOCK_MAIN = path.join(REPO_ROOT, 'apps/mock/src/main.ts');
const PROBE_MAIN = path.join(REPO_ROOT, 'apps/probe/src/main.ts');
const DEFAULT_PYTHON_CLIENT = path.resolve(REPO_ROOT, '..', 'shared/anchors/python_baseline_client.py');
const HOST = '127.0.0.1';

const MOCK_START_TIMEOUT_S = 15;
const MOCK_STOP_TIMEOUT_S = 10;
const CLIENT_TIMEOUT_MARGIN_S = 120;
const KILL_WAIT_S = 5;
const DEFAULT_DOC_SECTION = 'pacing';

type ClientName = 'probe' | 'probe-full' | 'probe-openai' | 'python';
const CLIENTS: readonly ClientName[] = ['probe', 'probe-full', 'probe-openai', 'python'];

interface Options {
  sessions: number[];
  runs: number;
  duration_s: number;
  clients: ClientName[];
  out_dir: string;
  write_doc?: string;
  doc_section: string;
  python_bin?: string;
  python_client: string;
  settle_s: number;
}

interface HostInfo {
  cpu_model: string;
  logical_cores: number;
  kernel: string;
  node: string;
  python?: string;
  commit: string;
  dirty: boolean;
  open_files_limit?: number;
}

type RunStatus = 'qualified' | 'unqualified' | 'failed';

interface RunResult {
  run: number;
  sessions: number;
  client: ClientName;
  /** 0 when this client ran first in its (run, sessions) pair. */
  position: number;
  status: RunStatus;
  failure?: string;
  exit_code: number | null;
  exit_signal: string | null;
  wall_s: number;
  dir: string;
  qualified: boolean | null;
  sessions_started: number | null;
  sessions_incomplete: number | null;
  packets_sent: number | null;
  late_packets: number | null;
  p50_deviation_ms: number | null;
  p99_deviation_ms: number | null;
  max_deviation_ms: number | null;
  client_cpu_cores: number | null;
  client_peak_rss_bytes: number | null;
  client_loop_lag_max_ms: number | null;
  /** Probe trace writer (probe-full; zero or null for the others). MB are 10^6 bytes; MB/s is over duration_s. */
  trace_mb_written: number | null;
  trace_mb_per_s: number | null;
  trace_backlog_peak_mb: number | null;
  trace_max_batch_write_ms: number | null;
  /** From the mock's stats: CPU seconds per wall second since the mock started (includes its idle time). */
  mock_cpu_cores: number | null;
  /** Mock CPU seconds from client start to client exit (/proc), and those seconds ÷ duration_s. */
  mock_cpu_s_during_client: number | null;
  mock_cpu_cores_load: number | null;
  mock_arrival_p99_ms: number | null;
  mock_arrival_max_ms: number | null;
  mock_loop_lag_max_ms: number | null;
  notes: string[];
}

class UsageError extends Error {}

// ---------------------------------------------------------------------------------------------
// Options

const USAGE =
  'usage: node --import tsx tools/bench/pacing.ts [--sessions 64,256,512,1024] [--runs 3] [--duration 30] ' +
  '[--clients probe,probe-full,probe-openai,python] [--out out/bench] [--write-doc docs/performance.md] [--doc-section pacing] ' +
  '[--python BIN] [--python-client FILE] [--settle 2]';

function positiveInt(name: string, text: string, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new UsageError(`--${name} must be an integer from 1 to ${max}, got "${text}"`);
  return value;
}

function positiveNumber(name: string, text: string, max: number, allowZero = false): number {
  const value = Number(text);
  const low_ok = allowZero ? value >= 0 : value > 0;
  if (text.trim() === '' || !Number.isFinite(value) || !low_ok || value > max) {
    throw new UsageError(`--${name} must be a number ${allowZero ? '>= 0' : '> 0'} and <= ${max}, got "${text}"`);
  }
  return value;
}

function parseClients(text: string): ClientName[] {
  const names = text.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!CLIENTS.includes(name as ClientName)) throw new UsageError(`--clients: unknown client "${name}" (known: ${CLIENTS.join(', ')})`);
  }
  return [...new Set(names)] as ClientName[];
}

function parseOptions(argv: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        sessions: { type: 'string', default: '64,256,512,1024' },
        runs: { type: 'string', default: '3' },
        duration: { type: 'string', default: '30' },
        clients: { type: 'string', default: 'probe,python' },
        out: { type: 'string', default: 'out/bench' },
        'write-doc': { type: 'string' },
        'doc-section': { type: 'string' },
        python: { type: 'string' },
        'python-client': { type: 'string', default: DEFAULT_PYTHON_CLIENT },
        settle: { type: 'string', default: '2' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) throw new UsageError(USAGE);
  const sessions = values.sessions.split(',').map((s) => positiveInt('sessions', s.trim(), 10_000));
  const doc_section = values['doc-section'] ?? DEFAULT_DOC_SECTION;
  if (!/^[A-Za-z0-9][\w-]*$/.test(doc_section)) throw new UsageError(`--doc-section must be letters, digits, "_" or "-", got "${doc_section}"`);
  if (values['doc-section'] !== undefined && values['write-doc'] === undefined) throw new UsageError('--doc-section needs --write-doc');
  return {
    sessions: [...new Set(sessions)],
    runs: positiveInt('runs', values.runs, 100),
    duration_s: positiveNumber('duration', values.duration, 3600),
    clients: parseClients(values.clients),
    out_dir: path.resolve(values.out),
    write_doc: values['write-doc'] === undefined ? undefined : path.resolve(values['write-doc']),
    doc_section,
    python_bin: values.python,
    python_client: path.resolve(values['python-client']),
    settle_s: positiveNumber('settle', values.settle, 60, true),
  };
}

// ---------------------------------------------------------------------------------------------
// Host

function runQuiet(file: string, args: string[]): string | undefined {
  try {
    return execFileSync(file, args, { cwd: REPO_ROOT, timeout: 10_000, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** The first interpreter that can import websockets (pyenv's python3 often cannot; Debian's can). */
function findPython(explicit: string | undefined): string | undefined {
  const candidates = explicit ? [explicit] : ['python3', '/usr/bin/python3'];
  return candidates.find((bin) => runQuiet(bin, ['-c', 'import websockets']) !== undefined);
}

function openFilesLimit(): number | undefined {
  const line = fs
    .readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
}

function hostInfo(python_bin: string | undefined): HostInfo {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    logical_cores: cpus.length,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    python: python_bin ? runQuiet(python_bin, ['--version']) : undefined,
    commit: runQuiet('git', ['rev-parse', '--short', 'HEAD']) ?? 'unknown',
    dirty: (runQuiet('git', ['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
    open_files_limit: openFilesLimit(),
  };
}

function hostLine(host: HostInfo): string {
  const python = host.python ? `, ${host.python}` : '';
  const dirty = host.dirty ? ' (dirty tree)' : '';
  return `${host.cpu_model}, ${host.logical_cores} logical cores, ${host.kernel}, Node ${host.node}${python}, commit ${host.commit}${dirty}`;
}

// ---------------------------------------------------------------------------------------------
// Child processes (only ours, only by PID)

type Role = 'mock' | 'client';

/** Children started here and still running. They get their own process group (detached), so a
 * terminal Ctrl-C reaches only this script, which then decides what each child is sent. */
const liveChildren = new Map<ChildProcess, Role>();

interface Exit {
  code: number | null;
  signal: string | null;
}

function spawnTracked(role: Role, file: string, args: string[], stdout: 'pipe' | number, stderr: number): ChildProcess {
  const child = spawn(file, args, { cwd: REPO_ROOT, stdio: ['ignore', stdout, stderr], detached: true });
  liveChildren.set(child, role);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

/** Resolves with the exit, or null if the child is still running after timeout_s. */
function waitForExit(child: ChildProcess, timeout_s: number): Promise<Exit | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(null);
    }, timeout_s * 1000);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      resolve({ code, signal });
    };
    child.once('exit', onExit);
  });
}

function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(child.pid, signal);
  } catch {
    // Already gone.
  }
}

async function killChild(child: ChildProcess): Promise<Exit | null> {
  signalChild(child, 'SIGKILL');
  return waitForExit(child, KILL_WAIT_S);
}

function openLog(file: string): number {
  return fs.openSync(file, 'w');
}

const CLOCK_TICKS_PER_S = Number(runQuiet('getconf', ['CLK_TCK']) ?? 100) || 100;

/** User + system CPU seconds of a live child, from /proc/<pid>/stat; null when unreadable. */
function procCpuSeconds(child: ChildProcess): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Mock

interface Mock {
  child: ChildProcess;
  url: string;
  stats_file: string;
}

/** Waits for the mock's "listening on ws://127.0.0.1:PORT/v1/realtime" line, bounded. */
function awaitListening(child: ChildProcess, log_fd: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => done(new Error(`mock printed no "listening" line within ${MOCK_START_TIMEOUT_S} s`)), MOCK_START_TIMEOUT_S * 1000);
    const onExit = (code: number | null, signal: string | null) => done(new Error(`mock exited before listening (code ${code}, signal ${signal})`));
    const onData = (chunk: Buffer) => {
      fs.writeSync(log_fd, chunk);
      seen += chunk.toString('utf8');
      const match = /listening on (ws:\/\/([^:/\s]+):\d+\/v1\/realtime)/.exec(seen);
      if (match && match[2] !== HOST) done(new Error(`mock listens on ${match[2]}, not ${HOST}`));
      else if (match) done(undefined, match[1]);
    };
    function done(err: Error | undefined, url?: string) {
      clearTimeout(timer);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(url as string);
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

async function startMock(dir: string, client: ClientName): Promise<Mock> {
  const stats_file = path.join(dir, 'mock-stats.json');
  const stdout_fd = openLog(path.join(dir, 'mock.stdout.log'));
  const stderr_fd = openLog(path.join(dir, 'mock.stderr.log'));
  const dialect = client === 'probe-openai' ? ['--protocol', 'openai'] : [];
  const args = ['--import', 'tsx', MOCK_MAIN, 'serve', ...dialect, '--host', HOST, '--port', '0', '--stats-output', stats_file];
  const child = spawnTracked('mock', process.execPath, args, 'pipe', stderr_fd);
  fs.closeSync(stderr_fd);
  child.stdout?.once('close', () => fs.closeSync(stdout_fd));
  try {
    return { child, url: await awaitListening(child, stdout_fd), stats_file };
  } catch (err) {
    await killChild(child);
    throw err;
  }
}

/** SIGINT, bounded wait, then SIGKILL. Returns a note when the stop was not clean. */
async function stopMock(mock: Mock): Promise<string | undefined> {
  signalChild(mock.child, 'SIGINT');
  const exit = await waitForExit(mock.child, MOCK_STOP_TIMEOUT_S);
  if (exit === null) {
    await killChild(mock.child);
    return `mock did not exit within ${MOCK_STOP_TIMEOUT_S} s of SIGINT; killed`;
  }
  if (exit.code !== 0) return `mock exited with code ${exit.code} signal ${exit.signal}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Clients

function clientCommand(client: ClientName, options: Options, url: string, sessions: number, dir: string): [string, string[]] {
  const common = ['--url', url, '--concurrency', String(sessions), '--duration', String(options.duration_s), '--output', dir];
  const probe = ['--import', 'tsx', PROBE_MAIN, 'run', ...common, '--quiet'];
  if (client === 'probe') return [process.execPath, probe];
  if (client === 'probe-full') return [process.execPath, [...probe, '--trace', 'full']];
  if (client === 'probe-openai') return [process.execPath, [...probe, '--protocol', 'openai', '--packet-ms', '80']];
  return [options.python_bin as string, [options.python_client, ...common]];
}

interface ClientExit extends Exit {
  timed_out: boolean;
  wall_s: number;
}

async function runClient(client: ClientName, options: Options, url: string, sessions: number, dir: string): Promise<ClientExit> {
  const [file, args] = clientCommand(client, options, url, sessions, dir);
  const stdout_fd = openLog(path.join(dir, 'client.stdout.log'));
  const stderr_fd = openLog(path.join(dir, 'client.stderr.log'));
  const started_ns = process.hrtime.bigint();
  const child = spawnTracked('client', file, args, stdout_fd, stderr_fd);
  fs.closeSync(stdout_fd);
  fs.closeSync(stderr_fd);
  let exit = await waitForExit(child, options.duration_s + CLIENT_TIMEOUT_MARGIN_S);
  const timed_out = exit === null;
  if (timed_out) exit = await killChild(child);
  const wall_s = Number(process.hrtime.bigint() - started_ns) / 1e9;
  return { code: exit?.code ?? null, signal: exit?.signal ?? null, timed_out, wall_s };
}

// ---------------------------------------------------------------------------------------------
// Reading results

type Json = Record<string, unknown>;

function readJson(file: string): Json | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Json;
  } catch {
    return undefined;
  }
}

/** A number at a dotted path, or null. */
function num(obj: Json | undefined, dotted: string): number | null {
  let value: unknown = obj;
  for (const key of dotted.split('.')) value = value && typeof value === 'object' ? (value as Json)[key] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function emptyResult(run: number, sessions: number, client: ClientName, position: number, dir: string): RunResult {
  return {
    run, sessions, client, position, status: 'failed', exit_code: null, exit_signal: null, wall_s: 0, dir,
    qualified: null, sessions_started: null, sessions_incomplete: null, packets_sent: null, late_packets: null,
    p50_deviation_ms: null, p99_deviation_ms: null, max_deviation_ms: null,
    client_cpu_cores: null, client_peak_rss_bytes: null, client_loop_lag_max_ms: null,
    trace_mb_written: null, trace_mb_per_s: null, trace_backlog_peak_mb: null, trace_max_batch_write_ms: null,
    mock_cpu_cores: null, mock_cpu_s_during_client: null, mock_cpu_cores_load: null, mock_arrival_p99_ms: null, mock_arrival_max_ms: null, mock_loop_lag_max_ms: null,
    notes: [],
  };
}

function megabytes(bytes: number | null): number | null {
  return bytes === null ? null : round(bytes / 1e6, 3);
}

function applyClientSummary(result: RunResult, summary: Json, duration_s: number): void {
  result.qualified = typeof summary.qualified === 'boolean' ? summary.qualified : null;
  result.sessions_started = num(summary, 'sessions.started');
  result.sessions_incomplete = num(summary, 'sessions.incomplete');
  result.packets_sent = num(summary, 'packets.sent');
  result.late_packets = num(summary, 'packets.late');
  result.p50_deviation_ms = num(summary, 'pacing_deviation_ms.p50');
  result.p99_deviation_ms = num(summary, 'pacing_deviation_ms.p99');
  result.max_deviation_ms = num(summary, 'pacing_deviation_ms.max');
  result.client_cpu_cores = num(summary, 'cpu_cores.total');
  result.client_peak_rss_bytes = num(summary, 'peak_rss_bytes');
  result.client_loop_lag_max_ms = num(summary, 'event_loop_lag_ms.max');
  result.trace_mb_written = megabytes(num(summary, 'trace.bytes_written'));
  result.trace_mb_per_s = result.trace_mb_written === null ? null : round(result.trace_mb_written / duration_s, 3);
  result.trace_backlog_peak_mb = megabytes(num(summary, 'trace_backlog_peak_bytes'));
  const max_batch_write_ms = num(summary, 'trace.max_batch_write_ms');
  result.trace_max_batch_write_ms = max_batch_write_ms === null ? null : round(max_batch_write_ms, 3);
}

function applyMockStats(result: RunResult, stats: Json): void {
  result.mock_cpu_cores = num(stats, 'cpu_cores.total');
  result.mock_arrival_p99_ms = num(stats, 'arrival_deviation_ms.p99');
  result.mock_arrival_max_ms = num(stats, 'arrival_deviation_ms.max');
  result.mock_loop_lag_max_ms = num(stats, 'event_loop_lag_ms.max');
}

/** Exit 0 with qualified summary, 3 with unqualified summary; anything else is a failed run. */
function classify(result: RunResult, exit: ClientExit, has_summary: boolean): void {
  if (exit.timed_out) result.failure = `client overran ${CLIENT_TIMEOUT_MARGIN_S} s past its duration; killed`;
  else if (!has_summary) result.failure = `no readable summary.json (exit code ${exit.code}, signal ${exit.signal})`;
  else if (exit.code !== 0 && exit.code !== 3) result.failure = `client exit code ${exit.code}, signal ${exit.signal}`;
  if (result.failure) result.status = 'failed';
  else result.status = exit.code === 0 && result.qualified === true ? 'qualified' : 'unqualified';
}

// ---------------------------------------------------------------------------------------------
// One client run against one fresh mock

async function benchOne(options: Options, run: number, sessions: number, client: ClientName, position: number): Promise<RunResult> {
  const dir = path.join(options.out_dir, `run-${run + 1}`, `s${sessions}`, client);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const result = emptyResult(run, sessions, client, position, dir);
  let mock: Mock;
  try {
    mock = await startMock(dir, client);
  } catch (err) {
    result.failure = `mock: ${(err as Error).message}`;
    return result;
  }
  const mock_cpu_before_s = procCpuSeconds(mock.child);
  const exit = await runClient(client, options, mock.url, sessions, dir);
  const mock_cpu_after_s = procCpuSeconds(mock.child);
  if (mock_cpu_before_s !== null && mock_cpu_after_s !== null) {
    result.mock_cpu_s_during_client = round(mock_cpu_after_s - mock_cpu_before_s, 3);
    result.mock_cpu_cores_load = round(result.mock_cpu_s_during_client / options.duration_s, 3);
  }
  const stop_note = await stopMock(mock);
  if (stop_note) result.notes.push(stop_note);
  result.exit_code = exit.code;
  result.exit_signal = exit.signal;
  result.wall_s = round(exit.wall_s, 3);

  const summary = readJson(path.join(dir, 'summary.json'));
  if (summary) applyClientSummary(result, summary, options.duration_s);
  classify(result, exit, summary !== undefined);
  const stats = readJson(mock.stats_file);
  if (stats) applyMockStats(result, stats);
  else result.notes.push('no mock stats');
  fs.rmSync(path.join(dir, 'sessions'), { recursive: true, force: true });
  return result;
}

/** Run r, session count i: the client list rotated left by (r + i), so each client takes its turn going
 * first (with two clients this alternates the given order and its reverse). */
function clientOrder(clients: ClientName[], run: number, count_index: number): ClientName[] {
  const shift = (run + count_index) % clients.length;
  return [...clients.slice(shift), ...clients.slice(0, shift)];
}

function sleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

function progressLine(done: number, total: number, r: RunResult): string {
  const what = `run ${r.run + 1}, ${r.sessions} sessions, ${r.client}`;
  if (r.status === 'failed') return `[${done}/${total}] ${what}: FAILED (${r.failure})`;
  const trace = r.trace_mb_written ? `, trace ${fmtMb(r.trace_mb_per_s)} MB/s` : '';
  return (
    `[${done}/${total}] ${what}: ${r.status}, late ${r.late_packets}, p99 ${fmtMs(r.p99_deviation_ms)} ms, ` +
    `max ${fmtMs(r.max_deviation_ms)} ms, cpu ${fmtCores(r.client_cpu_cores)}${trace}, ${r.wall_s.toFixed(1)} s`
  );
}

async function sweep(options: Options, state: { aborted: boolean }, results: RunResult[]): Promise<void> {
  const total = options.runs * options.sessions.length * options.clients.length;
  for (let run = 0; run < options.runs; run++) {
    for (const [i, sessions] of options.sessions.entries()) {
      for (const [position, client] of clientOrder(options.clients, run, i).entries()) {
        if (state.aborted) return;
        if (results.length > 0 && options.settle_s > 0) await sleep(options.settle_s);
        const result = await benchOne(options, run, sessions, client, position);
        results.push(result);
        process.stderr.write(`${progressLine(results.length, total, result)}\n`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function present(values: (number | null)[]): number[] {
  return values.filter((v): v is number => v !== null);
}

function fmtMs(value: number | null): string {
  if (value === null) return '–';
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** MB get the same precision rule as milliseconds. */
const fmtMb = fmtMs;

function fmtCores(value: number | null): string {
  return value === null ? '–' : value.toFixed(2);
}

function fmtRatio(value: number | null): string {
  return value === null ? '–' : `${value.toFixed(2)}×`;
}

/** "median [min–max]", or just the value when there is one run. */
function fmtSpread(values: number[], fmt: (v: number | null) => string): string {
  if (values.length === 0) return '–';
  const m = fmt(median(values));
  return values.length === 1 ? m : `${m} [${fmt(Math.min(...values))}–${fmt(Math.max(...values))}]`;
}

function markdownTable(header: string[], rows: string[][]): string {
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
    'max deviation ms, median [min–max]', 'client CPU cores (median)', 'mock CPU cores (median)', 'mock CPU cores under load (median)', 'client peak RSS MiB (median)',
  ];
  const rows: string[][] = [];
  for (const client of options.clients) {
    for (const sessions of options.sessions) {
      const ok = finished(results, sessions, client);
      const rss_mib = medianOf(ok, (r) => (r.client_peak_rss_bytes === null ? null : r.client_peak_rss_bytes / 2 ** 20));
      rows.push([
        client, String(sessions), qualifiedCell(results, sessions, client), lateSum(results, sessions, client),
        fmtSpread(present(ok.map((r) => r.p99_deviation_ms)), fmtMs), fmtSpread(present(ok.map((r) => r.max_deviation_ms)), fmtMs),
        fmtCores(medianOf(ok, (r) => r.client_cpu_cores)), fmtCores(medianOf(ok, (r) => r.mock_cpu_cores)),
        fmtCores(medianOf(ok, (r) => r.mock_cpu_cores_load)),
        rss_mib === null ? '–' : rss_mib.toFixed(0),
      ]);
    }
  }
  return markdownTable(header, rows);
}

function find(results: RunResult[], run: number, sessions: number, client: ClientName): RunResult | undefined {
  return results.find((r) => r.run === run && r.sessions === sessions && r.client === client && r.status !== 'failed');
}

/** numerator p99 / denominator p99 within each run where both finished (denominator > 0), one ratio per run. */
function p99Ratios(options: Options, results: RunResult[], sessions: number, numerator: ClientName, denominator: ClientName): number[] {
  const ratios: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const top = find(results, run, sessions, numerator)?.p99_deviation_ms ?? null;
    const bottom = find(results, run, sessions, denominator)?.p99_deviation_ms ?? null;
    if (top !== null && bottom !== null && bottom > 0) ratios.push(top / bottom);
  }
  return ratios;
}

/** probe p99 / python p99, each ratio within one run's pair, then the median over runs. */
function ratioTable(options: Options, results: RunResult[]): string {
  const header = ['sessions', 'probe p99 / python p99, median [min–max]', 'pairs', 'late packets probe', 'late packets python'];
  const rows = options.sessions.map((sessions) => {
    const ratios = p99Ratios(options, results, sessions, 'probe', 'python');
    return [String(sessions), fmtSpread(ratios, fmtRatio), String(ratios.length), lateSum(results, sessions, 'probe'), lateSum(results, sessions, 'python')];
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
    const ratios = p99Ratios(options, results, sessions, 'probe-full', 'probe');
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
    const ratios = p99Ratios(options, results, sessions, 'probe-openai', 'probe');
    return [
      String(sessions), fmtSpread(ratios, fmtRatio), String(ratios.length),
      lateSum(results, sessions, 'probe'), lateSum(results, sessions, 'probe-openai'),
      qualifiedCell(results, sessions, 'probe'), qualifiedCell(results, sessions, 'probe-openai'),
    ];
  });
  return markdownTable(header, rows);
}

function failureLines(results: RunResult[]): string[] {
  return results
    .filter((r) => r.status === 'failed' || r.notes.length > 0)
    .map((r) => `- run ${r.run + 1}, ${r.sessions} sessions, ${r.client}: ${[r.failure, ...r.notes].filter(Boolean).join('; ')}`);
}

function report(options: Options, results: RunResult[]): string {
  const parts = [mainTable(options, results)];
  parts.push(
    [
      'Figures are over runs that finished with a summary; failed runs count only in "qualified runs".',
      'Deviation is |send start − (origin + N × 80 ms)| as each client measured it.',
      '"mock CPU cores" is the mock\'s own figure (CPU seconds per wall second since it started, idle time included);',
      '"under load" is the mock\'s CPU seconds from client start to client exit (/proc) divided by the run duration.',
    ].join(' '),
  );
  if (options.clients.includes('probe') && options.clients.includes('python')) {
    parts.push('### Probe vs Python baseline, same run, same mock build', ratioTable(options, results));
    parts.push('A ratio below 1× means the probe kept tighter pacing than the Python client in the same run.');
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
  const failures = failureLines(results);
  if (failures.length) parts.push('Failed runs and notes:', failures.join('\n'));
  return parts.join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// Output files

function commandLine(argv: string[]): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return ['node', '--import', 'tsx', 'tools/bench/pacing.ts', ...argv].map(quote).join(' ');
}

function docMarkers(name: string): { start: string; end: string } {
  return { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` };
}

function docTitle(clients: ClientName[]): string {
  const topics: string[] = [];
  if (clients.includes('python')) topics.push('probe vs Python baseline');
  if (clients.includes('probe-full')) topics.push('full traces vs receipts only');
  if (clients.includes('probe-openai')) topics.push('openai dialect vs native');
  return topics.length ? `## Pacing: ${topics.join('; ')}` : '## Pacing';
}

function docSection(name: string, title: string, host_line: string, command: string, date: string, tables: string): string {
  const { start, end } = docMarkers(name);
  return [start, title, '', `Host: ${host_line}`, '', `Command: \`${command}\``, '', `Date: ${date}`, '', tables, end].join('\n');
}

/** Replaces the doc's section between NAME's markers; creates the file, or appends the section at the
 * end of an existing file that lacks the markers. A start marker without its end marker is an error. */
function writeDoc(file: string, name: string, section: string): void {
  const { start: start_marker, end: end_marker } = docMarkers(name);
  let next: string;
  if (!fs.existsSync(file)) {
    next = `# Performance\n\n${section}\n`;
  } else {
    const existing = fs.readFileSync(file, 'utf8');
    const start = existing.indexOf(start_marker);
    const end = start >= 0 ? existing.indexOf(end_marker, start) : -1;
    if (start >= 0 && end < 0) throw new Error(`${file} has ${start_marker} but no ${end_marker} after it; not writing`);
    next = start >= 0 ? existing.slice(0, start) + section + existing.slice(end + end_marker.length) : `${existing.trimEnd()}\n\n${section}\n`;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, next);
}

function writeResults(options: Options, host: HostInfo, command: string, started_at: string, wall_s: number, results: RunResult[], aborted: boolean): void {
  const body = { host, command, started_at, wall_s: round(wall_s, 1), aborted, options, runs: results };
  fs.mkdirSync(options.out_dir, { recursive: true });
  fs.writeFileSync(path.join(options.out_dir, 'results.json'), `${JSON.stringify(body, null, 1)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Main

/** On SIGINT/SIGTERM: start no more runs and interrupt the running client by PID (its mock is then
 * stopped as usual); partial results are written. If this script exits anyway, its children are killed. */
function installSignalHandlers(state: { aborted: boolean }): void {
  const onSignal = () => {
    if (state.aborted) return;
    state.aborted = true;
    process.stderr.write('interrupted: stopping the current run\n');
    for (const [child, role] of liveChildren) if (role === 'client') signalChild(child, 'SIGINT');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    for (const child of liveChildren.keys()) signalChild(child, 'SIGKILL');
  });
}

function checkPrerequisites(options: Options, host: HostInfo): void {
  if (options.clients.includes('python')) {
    if (!options.python_bin) throw new Error('no Python interpreter with websockets (apt-get install -y python3-websockets, or pass --python BIN)');
    if (!fs.existsSync(options.python_client)) throw new Error(`Python baseline client not found: ${options.python_client}`);
  }
  const needed_fds = Math.max(...options.sessions) + 64;
  if (host.open_files_limit !== undefined && host.open_files_limit < needed_fds) {
    process.stderr.write(`warning: open-files limit ${host.open_files_limit} is below ${needed_fds}; large runs may fail (ulimit -n)\n`);
  }
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (options.clients.includes('python')) options.python_bin = findPython(options.python_bin);
  const host = hostInfo(options.python_bin);
  checkPrerequisites(options, host);
  const command = commandLine(argv);
  const started_at = new Date().toISOString();
  const started_ns = process.hrtime.bigint();
  const state = { aborted: false };
  installSignalHandlers(state);
  process.stderr.write(`host: ${hostLine(host)}\n`);

  const results: RunResult[] = [];
  await sweep(options, state, results);
  const wall_s = Number(process.hrtime.bigint() - started_ns) / 1e9;
  writeResults(options, host, command, started_at, wall_s, results, state.aborted);

  const tables = report(options, results);
  process.stdout.write(`Host: ${hostLine(host)}\n\n${tables}\n\nresults: ${path.join(options.out_dir, 'results.json')} (${wall_s.toFixed(0)} s)\n`);
  if (options.write_doc && !state.aborted) {
    const section = docSection(options.doc_section, docTitle(options.clients), hostLine(host), command, started_at.slice(0, 10), tables);
    writeDoc(options.write_doc, options.doc_section, section);
    process.stderr.write(`updated ${options.write_doc}\n`);
  }
  if (state.aborted) return 130;
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
