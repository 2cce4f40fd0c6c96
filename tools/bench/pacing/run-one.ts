import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeSamples } from '@duplex-bench/metrics';
import type { MockStats } from '@duplex-bench/mock-servers';
import type { RunSummary } from '@duplex-bench/results';
import { HostSampler, meanOf, stallReport, writeHostSamples } from '../host-sampler';
import { pinClient, pinProcess } from '../pins';
import { entryOf, killChild, kitFlagsOf, openLog, procCpuSeconds, reapedChildrenCpuSeconds, ROOT, spawnTracked, startMock, stopMock, waitForExit, type Exit, type Mock } from '../processes';
import type { ClientName, Options } from './options';
import { fmtCores, fmtMb, fmtMs, round } from './format';
import { runFile, SESSIONS_DIR } from '@duplex-bench/results';

const PROBE_MAIN = 'apps/probe/src/main.ts';
const CLIENT_TIMEOUT_MARGIN_S = 120;

export type RunStatus = 'qualified' | 'unqualified' | 'failed';

export interface RunResult {
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
  /** The client process's whole CPU, start-up to exit (user + system, the kernel's count when it was reaped), seconds. */
  client_cpu_s: number | null;
  /** client_cpu_s over packets sent, µs: one packet cycle (an append out, its answers in), counted alike for every client. */
  client_cpu_us_per_packet: number | null;
  client_peak_rss_bytes: number | null;
  client_loop_lag_max_ms: number | null;
  /** The probe's receive delay p99, ms (server send stamp to client receive stamp), with `--stamp-sends`. */
  receive_delay_p99_ms: number | null;
  /** The probe's held-back socket reads (`reads_paused`: its reads of one poll phase passed their bound); 0 when there were none. */
  reads_paused: number | null;
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
  /** Mock CPU seconds while the client ran over appends received, µs. */
  mock_cpu_us_per_append: number | null;
  mock_arrival_p99_ms: number | null;
  mock_arrival_max_ms: number | null;
  mock_loop_lag_max_ms: number | null;
  /**
   * `--host-samples`: cores the hypervisor took (steal) and every other process took (this bench's
   * own /proc walk among them, about 0.01-0.02), means over the client's run.
   */
  host_steal_cores?: number;
  host_others_cores?: number;
  notes: string[];
}

/**
 * The mock each client runs against: append-echo, its openai flavour, or (probe-talk and
 * probe-conversation, a pair) the nemotron model mock that answers the built-in conversation.
 */
function mockArgs(client: ClientName, stamp: boolean): string[] {
  const stamps = stamp ? ['--stamp-sends'] : [];
  if (client === 'probe-openai') return ['--protocol', 'openai', ...stamps];
  if (client === 'probe-talk' || client === 'probe-conversation') return ['--profile', 'nemotron', '--conversation', 'default', '--respond-after-ms', '400', '--stop-after-ms', '200', ...stamps];
  return stamps;
}

function clientCommand(client: ClientName, options: Options, url: string, sessions: number, dir: string): [string, string[]] {
  const common = ['--url', url, '--concurrency', String(sessions), '--duration', String(options.duration_s), '--output', dir];
  // This checkout's compiled kit when it is built (npm run build), else its sources through tsx.
  const probe = [...entryOf(ROOT, PROBE_MAIN), 'run', ...common, '--quiet'];
  if (client === 'probe' || client === 'probe-talk') return [process.execPath, probe];
  if (client === 'probe-full') return [process.execPath, [...probe, '--trace', 'full']];
  if (client === 'probe-openai') return [process.execPath, [...probe, '--protocol', 'openai', '--packet-ms', '80']];
  if (client === 'probe-conversation') return [process.execPath, [...probe, '--conversation', 'default']];
  if (client === 'baseline') return [process.execPath, [...entryOf(options.baseline_root as string, PROBE_MAIN), 'run', ...common, '--quiet']];
  if (client === 'python') return [options.python_bin as string, [options.python_client, ...common]];
  // The floor runs with the kit's Node flags, as the probe does.
  if (client === 'floor') return [process.execPath, [...kitFlagsOf(ROOT), options.floor_js as string, ...common]];
  throw new Error(`no command for client ${client}`);
}

interface ClientExit extends Exit {
  timed_out: boolean;
  wall_s: number;
  cpu_s: number | null;
}

async function runClient(client: ClientName, options: Options, url: string, sessions: number, dir: string, sampler: HostSampler | null): Promise<ClientExit> {
  const [file, args] = clientCommand(client, options, url, sessions, dir);
  const stdout_fd = openLog(path.join(dir, 'client.stdout.log'));
  const stderr_fd = openLog(path.join(dir, 'client.stderr.log'));
  const started_ns = process.hrtime.bigint();
  const reaped_before_s = reapedChildrenCpuSeconds();
  const child = spawnTracked('client', file, args, stdout_fd, stderr_fd, client === 'baseline' ? options.baseline_root : ROOT);
  if (sampler) sampler.client = child;
  const unpin = options.pins ? pinClient(child, options.pins) : () => undefined;
  fs.closeSync(stdout_fd);
  fs.closeSync(stderr_fd);
  let exit = await waitForExit(child, options.duration_s + CLIENT_TIMEOUT_MARGIN_S);
  unpin();
  const timed_out = exit === null;
  if (timed_out) exit = await killChild(child);
  const wall_s = Number(process.hrtime.bigint() - started_ns) / 1e9;
  // Nothing else of ours ends while a client runs (the mock outlives it), so the reaped CPU that grew is the client's.
  const reaped_after_s = reapedChildrenCpuSeconds();
  const cpu_s = reaped_before_s === null || reaped_after_s === null ? null : reaped_after_s - reaped_before_s;
  return { code: exit?.code ?? null, signal: exit?.signal ?? null, timed_out, wall_s, cpu_s };
}

function emptyResult(run: number, sessions: number, client: ClientName, position: number, dir: string): RunResult {
  return {
    run, sessions, client, position, status: 'failed', exit_code: null, exit_signal: null, wall_s: 0, dir,
    qualified: null, sessions_started: null, sessions_incomplete: null, packets_sent: null, late_packets: null,
    p50_deviation_ms: null, p99_deviation_ms: null, max_deviation_ms: null,
    client_cpu_cores: null, client_cpu_s: null, client_cpu_us_per_packet: null, client_peak_rss_bytes: null, client_loop_lag_max_ms: null, receive_delay_p99_ms: null, reads_paused: null,
    trace_mb_written: null, trace_mb_per_s: null, trace_backlog_peak_mb: null, trace_max_batch_write_ms: null,
    mock_cpu_cores: null, mock_cpu_s_during_client: null, mock_cpu_cores_load: null, mock_cpu_us_per_append: null, mock_arrival_p99_ms: null, mock_arrival_max_ms: null, mock_loop_lag_max_ms: null,
    notes: [],
  };
}

function megabytes(bytes: number | null): number | null {
  return bytes === null ? null : round(bytes / 1e6, 3);
}

/** A summary as a client wrote it: the probe's whole RunSummary, the Python baseline's subset of it. */
type ClientSummary = Partial<RunSummary>;

const finite = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function applyClientSummary(result: RunResult, s: ClientSummary, duration_s: number, cpu_s: number | null): void {
  result.qualified = typeof s.qualified === 'boolean' ? s.qualified : null;
  result.sessions_started = finite(s.sessions?.started);
  result.sessions_incomplete = finite(s.sessions?.incomplete);
  result.packets_sent = finite(s.packets?.sent);
  result.late_packets = finite(s.packets?.late);
  result.p50_deviation_ms = finite(s.pacing_deviation_ms?.p50);
  result.p99_deviation_ms = finite(s.pacing_deviation_ms?.p99);
  result.max_deviation_ms = finite(s.pacing_deviation_ms?.max);
  result.client_cpu_cores = finite(s.cpu_cores?.total);
  // The kernel's count of the whole process, not the client's own: the Python baseline counts only its sessions' span.
  result.client_cpu_s = cpu_s === null ? null : round(cpu_s, 2);
  result.client_cpu_us_per_packet = cpu_s !== null && result.packets_sent ? round((cpu_s / result.packets_sent) * 1e6, 1) : null;
  result.client_peak_rss_bytes = finite(s.peak_rss_bytes);
  result.client_loop_lag_max_ms = finite(s.event_loop_lag_ms?.max);
  result.receive_delay_p99_ms = finite(s.receive_delay_ms?.p99);
  // The probe states it only when there were any; the Python baseline has no such figure.
  result.reads_paused = result.client === 'python' || result.client === 'floor' ? null : (finite(s.reads_paused) ?? 0);
  result.trace_mb_written = megabytes(finite(s.trace?.bytes_written));
  result.trace_mb_per_s = result.trace_mb_written === null ? null : round(result.trace_mb_written / duration_s, 3);
  result.trace_backlog_peak_mb = megabytes(finite(s.trace_backlog_peak_bytes));
  const max_batch_write_ms = finite(s.trace?.max_batch_write_ms);
  result.trace_max_batch_write_ms = max_batch_write_ms === null ? null : round(max_batch_write_ms, 3);
}

function applyMockStats(result: RunResult, stats: MockStats): void {
  result.mock_cpu_cores = finite(stats.cpu_cores.total);
  result.mock_arrival_p99_ms = finite(stats.arrival_deviation_ms.p99);
  result.mock_arrival_max_ms = finite(stats.arrival_deviation_ms.max);
  result.mock_loop_lag_max_ms = finite(stats.event_loop_lag_ms.max);
  // The mock's CPU while the client ran (/proc), per append it received.
  if (result.mock_cpu_s_during_client !== null && stats.appends > 0) result.mock_cpu_us_per_append = round((result.mock_cpu_s_during_client / stats.appends) * 1e6, 1);
}

/** Exit 0 with qualified summary, 3 with unqualified summary; anything else is a failed run. */
function classify(result: RunResult, exit: ClientExit, has_summary: boolean): void {
  if (exit.timed_out) result.failure = `client overran ${CLIENT_TIMEOUT_MARGIN_S} s past its duration; killed`;
  else if (!has_summary) result.failure = `no readable summary.json (exit code ${exit.code}, signal ${exit.signal})`;
  else if (exit.code !== 0 && exit.code !== 3) result.failure = `client exit code ${exit.code}, signal ${exit.signal}`;
  if (result.failure) result.status = 'failed';
  else result.status = exit.code === 0 && result.qualified === true ? 'qualified' : 'unqualified';
}

async function benchOne(options: Options, run: number, sessions: number, client: ClientName, position: number): Promise<RunResult> {
  const dir = path.join(options.out_dir, `run-${run + 1}`, `s${sessions}`, client);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const result = emptyResult(run, sessions, client, position, dir);
  let mock: Mock;
  try {
    mock = await startMock(dir, mockArgs(client, options.stamp_sends), client === 'baseline' ? options.baseline_root : ROOT);
    if (options.pins) pinProcess(mock.child.pid, options.pins.mock);
  } catch (err) {
    result.failure = `mock: ${(err as Error).message}`;
    return result;
  }
  const mock_cpu_before_s = procCpuSeconds(mock.child);
  const sampler = options.host_samples ? new HostSampler(mock.child) : null;
  let exit: ClientExit;
  try {
    exit = await runClient(client, options, mock.url, sessions, dir, sampler);
  } finally {
    sampler?.stop();
  }
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

  const summary = readJson<ClientSummary>(runFile(dir, 'summary'));
  if (summary) applyClientSummary(result, summary, options.duration_s, exit.cpu_s);
  classify(result, exit, summary !== undefined);
  if (sampler) hostFigures(result, sampler, dir);
  const stats = readJson<MockStats>(mock.stats_file);
  if (stats) applyMockStats(result, stats);
  else result.notes.push('no mock stats');
  fs.rmSync(path.join(dir, SESSIONS_DIR), { recursive: true, force: true });
  return result;
}

/**
 * `--host-samples`: the run's mean steal and other processes' cores, the samples in host.jsonl, and
 * for a run with late packets and a samples file (the probe's), its stalls in stalls.md.
 */
function hostFigures(result: RunResult, sampler: HostSampler, dir: string): void {
  const mean = meanOf(sampler.samples);
  result.host_steal_cores = round(mean.steal, 3);
  result.host_others_cores = round(mean.others, 3);
  writeHostSamples(dir, sampler.samples);
  const samples_file = runFile(dir, 'samples');
  if (!result.late_packets || !fs.existsSync(samples_file)) return;
  fs.writeFileSync(path.join(dir, 'stalls.md'), stallReport(decodeSamples(fs.readFileSync(samples_file)), sampler.samples) + '\n');
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
  const host = r.host_steal_cores === undefined ? '' : `, host steal ${fmtCores(r.host_steal_cores)} others ${fmtCores(r.host_others_cores ?? null)}`;
  return (
    `[${done}/${total}] ${what}: ${r.status}, late ${r.late_packets}, p99 ${fmtMs(r.p99_deviation_ms)} ms, ` +
    `max ${fmtMs(r.max_deviation_ms)} ms, cpu ${fmtCores(r.client_cpu_cores)} (${r.client_cpu_us_per_packet ?? '–'} µs/packet, mock ${r.mock_cpu_us_per_append ?? '–'} µs/append)${trace}${host}, ${r.wall_s.toFixed(1)} s`
  );
}

export async function sweep(options: Options, state: { aborted: boolean }, results: RunResult[]): Promise<void> {
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

