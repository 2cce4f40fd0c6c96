/**
 * Long runs in flat memory (issue: traffic like production). Two loads, each against a mock in its
 * own process started here, the compiled kit (`npm run build` first):
 *
 * - churn: `run --arrival-rate R --session-duration exp:MEAN` (R × MEAN Erlangs, 300 by default;
 *   `--arrivals constant --durations fixed` holds exactly R × MEAN in flight, so the high-water mark
 *   of sessions in flight, which RSS follows, cannot wander up)
 *   against the native nemotron mock for `--run-for` s: is it pacing-qualified, how much does the
 *   client's RSS grow per minute after the first minute (the summary's `rss`, least squares over
 *   1 s samples), and is the p99 pacing deviation of the last minute within 1.5× of the second's
 *   (from samples.msgpack, by each packet's send start);
 * - steady: `run --concurrency N --duration S` against the same mock: the same figures for sessions
 *   that each stream for the whole run (an hour at 512 sessions is issue 47's check);
 * - http: `http --rate R --duration S` against the max-throughput stub: RSS growth per minute, and
 *   whether requests.jsonl holds every request sent.
 *
 *   node --import tsx tools/bench/long-run.ts [--load churn|http|steady|both|LIST] [--rate 20] [--mean-s 15] [--run-for 600]
 *                                             [--arrivals poisson|constant] [--durations exp|fixed]
 *                                             [--sessions 512] [--steady-s 3600]
 *                                             [--http-rate 2000] [--http-s 300] [--warmup-s 60] [--out DIR]
 *                                             [--bin dist/duplex-bench.js] [--node-flags=FLAGS (default: the kit's)]
 *                                             [--pin CLIENT_CPU:MOCK_CPU] [--pin-threads main|all] [--sampler]
 *
 * `--pin 0:1` gives the client's loop CPU 0 to itself and puts everything else on CPU 1 (pins.ts);
 * `--sampler` runs the kit's own `--sampler` (steady load), whose summary gives each loop stall over
 * 50 ms its cause (busy, cpu_wait, gc, unaccounted ...).
 *
 * Every process is bounded in time and stopped by its PID; traffic stays on 127.0.0.1.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { decodeSamples } from '@duplex-bench/metrics';
import type { RunSummary } from '@duplex-bench/results';
import { hostInfo, hostLine } from './host';
import { HostSampler, stallReport, writeHostSamples } from './host-sampler';
import { parsePins, pinBench, pinClient, pinProcess, pinsLine } from './pins';
import { exited, HTTP_LISTENING, installInterrupts, kitFlagsOf, openLog, ROOT, signalChild, spawnTracked, startMock, stopMock } from './processes';

/** This checkout's compiled kit, the bundle run unless `--bin` names another. */
const CHECKOUT_BIN = join(ROOT, 'dist', 'duplex-bench.js');
const { values } = parseArgs({
  options: {
    load: { type: 'string', default: 'both' },
    rate: { type: 'string', default: '20' },
    'mean-s': { type: 'string', default: '15' },
    arrivals: { type: 'string', default: 'poisson' },
    durations: { type: 'string', default: 'exp' },
    'run-for': { type: 'string', default: '600' },
    sessions: { type: 'string', default: '512' },
    'steady-s': { type: 'string', default: '3600' },
    'http-rate': { type: 'string', default: '2000' },
    'http-s': { type: 'string', default: '300' },
    'warmup-s': { type: 'string', default: '60' },
    out: { type: 'string', default: join('out', 'long-run') },
    bin: { type: 'string', default: CHECKOUT_BIN },
    // The kit's own (its executable's first line), as its users run it; `--node-flags=` for none.
    'node-flags': { type: 'string', default: kitFlagsOf(ROOT).join(' ') },
    pin: { type: 'string' },
    'pin-threads': { type: 'string', default: 'main' },
    sampler: { type: 'boolean', default: false },
  },
});
/** Bad usage: one line, exit 2. */
function usage(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}
/** `--pin C:M`: the client's CPU and the mock's, or none (pins.ts). */
const PIN = (() => {
  try {
    return parsePins('long-run.ts', values.pin, values['pin-threads']);
  } catch (err) {
    return usage((err as Error).message);
  }
})();
if (PIN) pinBench(PIN);
/** The kit's bundle under test: a copy of an older build's `dist/` compares two commits on one mock build. */
const BIN = values.bin;
/** Node's own flags for the kit's process (`--node-flags=--min-semi-space-size=16`): V8 reads its heap's sizes only at start. */
const NODE_FLAGS = values['node-flags'].split(' ').filter((f) => f !== '');
/** What ran, for the first line of each load's table: the bundle when it is not this checkout's, and Node's flags. */
const UNDER_TEST = [
  BIN === CHECKOUT_BIN ? '' : `; ${BIN}`,
  NODE_FLAGS.length > 0 ? `; node ${NODE_FLAGS.join(' ')}` : '',
  PIN ? `; ${pinsLine(PIN)}` : '',
].join('');
const warmup_s = Number(values['warmup-s']);
const interrupted = { now: false, stop: (): void => undefined };
installInterrupts(() => {
  interrupted.now = true;
  interrupted.stop();
});

/** Runs the kit's command to its end, bounded; SIGINT on our interrupt. */
async function kit(dir: string, args: string[], bound_s: number, sampler?: HostSampler): Promise<number | null> {
  const out = openLog(join(dir, 'probe.stdout.log'));
  const err = openLog(join(dir, 'probe.stderr.log'));
  const child = spawnTracked('client', process.execPath, [...NODE_FLAGS, BIN, ...args], out, err);
  const unpin = PIN ? pinClient(child, PIN) : () => undefined;
  if (sampler) sampler.client = child;
  interrupted.stop = () => signalChild(child, 'SIGINT');
  const code = await exited(child, bound_s * 1000);
  unpin();
  sampler?.stop();
  return code;
}

interface Rss {
  peak_mib: number | null;
  growth_mib_per_min: number | null;
  late_growth_mib_per_min?: number | null;
  late_from_s?: number | null;
  span_s: number;
  from_s: number;
  in_flight_peak_at_from?: number | null;
  in_flight_peak?: number | null;
  held_from_s?: number | null;
  held_growth_mib_per_min?: number | null;
}

/** "+1.23 MiB/min over 540 s (from 330 s: +0.12)": the whole window's slope, then its second half's. */
function growth(r: Rss): string {
  const g = r.growth_mib_per_min;
  const late = r.late_growth_mib_per_min;
  return `${g === null ? '-' : g.toFixed(2)} MiB/min over ${r.span_s} s${late === null || late === undefined ? '' : ` (from ${r.late_from_s} s: ${late.toFixed(2)})`}`;
}

/** "309 → 342; from 150 s: +0.05": the most in flight by the warm-up's end and by the load's end, and the slope while that high-water mark held. */
function highWater(r: Rss): string {
  if (r.in_flight_peak === undefined || r.in_flight_peak === null) return '-';
  const held = r.held_growth_mib_per_min;
  return `${r.in_flight_peak_at_from ?? '-'} → ${r.in_flight_peak}${held === null || held === undefined ? '' : `; from ${r.held_from_s} s: ${held.toFixed(2)} MiB/min`}`;
}

/** p99 of |deviation| over the packets whose send start falls in [from_s, to_s) after the first packet. */
function p99By(file: ReturnType<typeof decodeSamples>, windows: Array<[number, number]>): number[] {
  let first = Infinity;
  for (const s of file.sessions) if (s.start_s.length > 0) first = Math.min(first, s.start_s[0]);
  const per = windows.map(() => [] as number[]);
  for (const s of file.sessions) {
    for (let i = 0; i < s.start_s.length; i++) {
      const t = s.start_s[i] - first;
      windows.forEach(([a, b], w) => t >= a && t < b && per[w].push(Math.abs(s.deviation_ms[i])));
    }
  }
  return per.map((v) => {
    v.sort((x, y) => x - y);
    return v.length === 0 ? NaN : v[Math.min(v.length - 1, Math.ceil(0.99 * v.length) - 1)];
  });
}

/** The stalls' table, and the host's samples kept beside the run (host.jsonl) for a closer look. */
async function stallsAfter(dir: string, file: ReturnType<typeof decodeSamples>, sampler: HostSampler): Promise<string> {
  sampler.stop();
  writeHostSamples(dir, sampler.samples);
  return stallReport(file, sampler.samples);
}

async function churn(out: string): Promise<string> {
  const rate = Number(values.rate);
  const mean_s = Number(values['mean-s']);
  const run_for = Number(values['run-for']);
  const process_ = values.arrivals;
  const duration = `${values.durations}:${mean_s}`;
  if (!['poisson', 'constant'].includes(process_) || !['exp', 'fixed'].includes(values.durations)) usage('long-run.ts: --arrivals poisson|constant, --durations exp|fixed');
  const dir = join(out, 'churn');
  await mkdir(dir, { recursive: true });
  const mock = await startMock(dir, ['--profile', 'nemotron'], ROOT);
  if (PIN) pinProcess(mock.child.pid, PIN.mock);
  const sampler = new HostSampler(mock.child);
  const code = await kit(
    dir,
    ['run', '--url', mock.url, '--arrival-rate', String(rate), '--arrivals', process_, '--session-duration', duration, '--run-for', String(run_for), '--warmup-s', String(warmup_s), '--seed', '1', '--trace', 'off', '--output', join(dir, 'run'), '--quiet', '--allow-unqualified'],
    run_for + 20 * mean_s + 120,
    sampler,
  );
  const note = await stopMock(mock);
  const s = JSON.parse(await readFile(join(dir, 'run', 'summary.json'), 'utf8')) as { qualified: boolean; packets: { sent: number; late: number }; rss: Rss; peak_overlapping_streams: number; cpu_us_per_packet: number; cpu_cores: { total: number }; arrivals: { started: number; peak_in_flight: number } };
  const samples = decodeSamples(await readFile(join(dir, 'run', 'samples.msgpack')));
  const [second, last] = p99By(samples, [
    [60, 120],
    [run_for - 60, run_for],
  ]);
  return [
    `churn: ${rate}/s ${process_} × ${duration} s = ${rate * mean_s} Erlangs for ${run_for} s (exit ${code}${note ? `; ${note}` : ''}${UNDER_TEST})`,
    `| qualified | late packets | sessions | peak in flight | client CPU | RSS growth after ${warmup_s} s (second half) | in flight at most, by ${warmup_s} s → by the end; slope while that held | peak RSS | p99 |dev| min 2 | p99 |dev| last min | ratio |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| ${s.qualified ? 'yes' : 'no'} | ${s.packets.late} of ${s.packets.sent} | ${s.arrivals.started} | ${s.arrivals.peak_in_flight} | ${s.cpu_cores.total} cores, ${s.cpu_us_per_packet} µs/packet | ${growth(s.rss)} | ${highWater(s.rss)} | ${s.rss.peak_mib?.toFixed(0)} MiB | ${second.toFixed(2)} ms | ${last.toFixed(2)} ms | ${(last / second).toFixed(2)} |`,
    '',
    await stallsAfter(dir, samples, sampler),
  ].join('\n');
}

async function steady(out: string): Promise<string> {
  const sessions = Number(values.sessions);
  const seconds = Number(values['steady-s']);
  const dir = join(out, 'steady');
  await mkdir(dir, { recursive: true });
  const mock = await startMock(dir, ['--profile', 'nemotron'], ROOT);
  if (PIN) pinProcess(mock.child.pid, PIN.mock);
  const sampler = new HostSampler(mock.child);
  const code = await kit(
    dir,
    [
      ...['run', '--url', mock.url, '--concurrency', String(sessions), '--duration', String(seconds), '--max-session-s', String(seconds + 60), '--warmup-s', String(warmup_s)],
      ...['--trace', 'off', '--output', join(dir, 'run'), '--quiet', '--allow-unqualified', ...(values.sampler ? ['--sampler'] : [])],
    ],
    seconds + 300,
    sampler,
  );
  const note = await stopMock(mock);
  const s = JSON.parse(await readFile(join(dir, 'run', 'summary.json'), 'utf8')) as {
    qualified: boolean;
    packets: { sent: number; late: number };
    rss: Rss;
    cpu_us_per_packet: number;
    cpu_cores: { total: number };
    sessions: { completed: number; incomplete: number };
    stalls?: RunSummary['stalls'];
  };
  const samples = decodeSamples(await readFile(join(dir, 'run', 'samples.msgpack')));
  const [second, last] = p99By(samples, [
    [60, 120],
    [seconds - 60, seconds],
  ]);
  return [
    `steady: ${sessions} sessions for ${seconds} s, native nemotron mock (exit ${code}${note ? `; ${note}` : ''}${UNDER_TEST})`,
    `| qualified | late packets | sessions completed / incomplete | client CPU | RSS growth after ${warmup_s} s (second half) | peak RSS | p99 |dev| min 2 | p99 |dev| last min | ratio |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| ${s.qualified ? 'yes' : 'no'} | ${s.packets.late} of ${s.packets.sent} | ${s.sessions.completed} / ${s.sessions.incomplete} | ${s.cpu_cores.total} cores, ${s.cpu_us_per_packet} µs/packet | ${growth(s.rss)} | ${s.rss.peak_mib?.toFixed(0)} MiB | ${second.toFixed(2)} ms | ${last.toFixed(2)} ms | ${(last / second).toFixed(2)} |`,
    '',
    ...(s.stalls ? [loopStalls(s.stalls), ''] : []),
    await stallsAfter(dir, samples, sampler),
  ].join('\n');
}

/** The kit's `--sampler` account: how many loop stalls, by cause, and the longest ten. */
function loopStalls(st: NonNullable<RunSummary['stalls']>): string {
  const causes = Object.entries(st.by_cause)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const longest = [...st.list]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10)
    .map((x) => `${x.ms.toFixed(0)} ms ${x.cause} at ${x.t_s} s`);
  return `loop stalls over ${st.threshold_ms} ms (the kit's --sampler): ${st.count}${causes ? ` (${causes})` : ''}${longest.length ? `; longest: ${longest.join(', ')}` : ''}`;
}

async function lines(file: string): Promise<number> {
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(file) })) if (line.length > 0) n++;
  return n;
}

async function http(out: string): Promise<string> {
  const rate = Number(values['http-rate']);
  const seconds = Number(values['http-s']);
  const dir = join(out, 'http');
  await mkdir(dir, { recursive: true });
  const stub = await startMock(dir, ['--protocol', 'http', '--stub', 'max-throughput', '--output-length', '100', '--stream-interval', '10'], ROOT, HTTP_LISTENING);
  if (PIN) pinProcess(stub.child.pid, PIN.mock);
  const code = await kit(dir, ['http', '--url', stub.url, '--rate', String(rate), '--duration', String(seconds), '--warmup-s', String(warmup_s), '--output', join(dir, 'run'), '--quiet', '--allow-unqualified'], seconds + 120);
  const note = await stopMock(stub);
  const s = JSON.parse(await readFile(join(dir, 'run', 'summary.json'), 'utf8')) as { qualified: boolean; requests: { sent: number; completed: number; failed: number }; client: { rss: Rss; late_sends: number; cpu_cores: { total: number }; cpu_us_per_request: number } };
  const recorded = await lines(join(dir, 'run', 'requests.jsonl'));
  return [
    `http: ${rate} requests/s for ${seconds} s, max-throughput stub, 100 characters in 10-character events (exit ${code}${note ? `; ${note}` : ''}${UNDER_TEST})`,
    `| qualified | requests sent / completed / failed | lines in requests.jsonl | late sends | client CPU | RSS growth after ${warmup_s} s (second half) | peak RSS |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
    `| ${s.qualified ? 'yes' : 'no'} | ${s.requests.sent} / ${s.requests.completed} / ${s.requests.failed} | ${recorded} | ${s.client.late_sends} | ${s.client.cpu_cores.total} cores, ${s.client.cpu_us_per_request} µs/request | ${growth(s.client.rss)} | ${s.client.rss.peak_mib?.toFixed(0)} MiB |`,
  ].join('\n');
}

async function main(): Promise<void> {
  const out = values.out as string;
  await mkdir(out, { recursive: true });
  const report = [`host: ${hostLine(hostInfo(undefined))}`];
  const loads = values.load === 'both' ? ['churn', 'http'] : values.load.split(',');
  const known: Record<string, (out: string) => Promise<string>> = { steady, churn, http };
  for (const load of loads) if (!(load in known)) usage(`long-run.ts: --load takes ${Object.keys(known).join(', ')}, both, or a comma list, not ${load}`);
  for (const load of loads) {
    if (interrupted.now) break;
    report.push(await known[load](out));
    process.stderr.write(`${report[report.length - 1]}\n\n`);
  }
  process.stdout.write(`${report.join('\n\n')}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`error: long-run.ts: ${err.message}\n`);
  process.exit(1);
});
