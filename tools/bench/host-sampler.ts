// What the host did while a run's packets went late: the CPU the hypervisor took (steal), the CPU
// of the client, of the mock, and of everything else, sampled from /proc every `every_ms`, on the
// monotonic clock the kit stamps its packets with (CLOCK_MONOTONIC, the same in every process).
// A late packet is one whose send started over a packet after its schedule; `stallsOf` joins the
// late packets of a run into stalls and says, for each, which of those took the cores meanwhile,
// and which other processes of the host (by name) took the most.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionSampleColumns } from '@duplex-bench/metrics';
import { CLOCK_TICKS_PER_S, hostCpuSeconds, procCpuSeconds, readStat } from './processes';

const NS_PER_S = 1e9;

/** One interval: its end on the monotonic clock (s), its length (s), and cores used in it by each. */
export interface HostSample {
  t_s: number;
  span_s: number;
  steal: number;
  client: number;
  mock: number;
  others: number;
  /** The other processes that took at least 0.05 cores in the interval, by name: `name pid` → cores. */
  busiest?: Record<string, number>;
}

/** CPU seconds so far, read at `t_s`: the host's (busy, steal), the client's and the mock's (0 once gone). */
interface Reading {
  t_s: number;
  busy: number;
  steal: number;
  client: number;
  mock: number;
}

/** Samples until `stop()`; `client` may be set after the start (the kit starts after its mock). */
export class HostSampler {
  readonly samples: HostSample[] = [];
  client: ChildProcess | undefined;
  private last: Reading;
  /** Every other process's CPU seconds at the last look, by `name pid`. */
  private lastOthers = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly mock: ChildProcess,
    every_ms = 100,
  ) {
    this.last = this.read();
    this.timer = setInterval(() => this.sample(), every_ms);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private read(): Reading {
    const client = this.client ? procCpuSeconds(this.client) : null;
    return { t_s: Number(process.hrtime.bigint()) / NS_PER_S, ...hostCpuSeconds(), client: client ?? 0, mock: procCpuSeconds(this.mock) ?? 0 };
  }

  private sample(): void {
    const now = this.read();
    const span_s = now.t_s - this.last.t_s;
    const cores = (cpu_s: number) => Math.max(0, cpu_s) / span_s;
    const client = cores(now.client - this.last.client);
    const mock = cores(now.mock - this.last.mock);
    const others = otherProcesses(new Set([this.client?.pid, this.mock.pid]));
    const busiest: Record<string, number> = {};
    for (const [key, cpu_s] of others) {
      const before = this.lastOthers.get(key);
      const c = before === undefined ? 0 : cores(cpu_s - before);
      if (c >= 0.05) busiest[key] = Math.round(c * 100) / 100;
    }
    this.lastOthers = others;
    const sample: HostSample = { t_s: now.t_s, span_s, steal: cores(now.steal - this.last.steal), client, mock, others: Math.max(0, cores(now.busy - this.last.busy) - client - mock) };
    this.samples.push(Object.keys(busiest).length > 0 ? { ...sample, busiest } : sample);
    this.last = now;
  }
}

/** CPU seconds so far of every process on the host but `skip` (the client and the mock), by `name pid`; the kernel's own threads are processes here too. */
function otherProcesses(skip: Set<number | undefined>): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || skip.has(Number(entry))) continue;
    const stat = readStat(entry); // null: gone between the listing and the read
    if (stat) out.set(`${stat.name} ${entry}`, (Number(stat.fields[11]) + Number(stat.fields[12])) / CLOCK_TICKS_PER_S);
  }
  return out;
}

/** A stretch of time in which some packet's send was waiting over a packet past its schedule. */
export interface Stall {
  from_s: number;
  to_s: number;
  late: number;
  worst_ms: number;
  steal: number;
  client: number;
  mock: number;
  others: number;
  /** The other processes that took the most in the samples over the stall: `name pid` and mean cores, the top 3. */
  busiest: string;
}

/**
 * Joins the late packets (|deviation| over `late_ms`) into stalls: each packet waited from its
 * schedule to its send start; waits that overlap are one stall. Each stall gets the mean cores of
 * the host samples that overlap it.
 */
export function stallsOf(sessions: SessionSampleColumns[], samples: HostSample[], late_ms: number): Stall[] {
  const waits: Array<[number, number, number]> = [];
  for (const s of sessions) {
    for (let i = 0; i < s.start_s.length; i++) {
      if (Math.abs(s.deviation_ms[i]) > late_ms) waits.push([s.start_s[i] - s.deviation_ms[i] / 1000, s.start_s[i], Math.abs(s.deviation_ms[i])]);
    }
  }
  waits.sort((a, b) => a[0] - b[0]);
  const stalls: Stall[] = [];
  for (const [from_s, to_s, ms] of waits) {
    const open = stalls[stalls.length - 1];
    if (open && from_s <= open.to_s) {
      open.to_s = Math.max(open.to_s, to_s);
      open.late++;
      open.worst_ms = Math.max(open.worst_ms, ms);
    } else stalls.push({ from_s, to_s, late: 1, worst_ms: ms, steal: 0, client: 0, mock: 0, others: 0, busiest: '' });
  }
  for (const stall of stalls) {
    const over = samples.filter((h) => h.t_s > stall.from_s && h.t_s - h.span_s < stall.to_s);
    const mean = (k: 'steal' | 'client' | 'mock' | 'others') => over.reduce((sum, h) => sum + h[k], 0) / Math.max(1, over.length);
    const by = new Map<string, number>();
    for (const h of over) for (const [key, c] of Object.entries(h.busiest ?? {})) by.set(key, (by.get(key) ?? 0) + c / over.length);
    const busiest = [...by]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([key, c]) => `${key} ${c.toFixed(2)}`)
      .join(', ');
    Object.assign(stall, { steal: mean('steal'), client: mean('client'), mock: mean('mock'), others: mean('others'), busiest });
  }
  return stalls;
}

/** The whole run's mean cores, for the stalls' table to be read against. */
export function meanOf(samples: HostSample[]): Omit<HostSample, 't_s' | 'span_s'> {
  const mean = (k: 'steal' | 'client' | 'mock' | 'others') => samples.reduce((sum, h) => sum + h[k], 0) / Math.max(1, samples.length);
  return { steal: mean('steal'), client: mean('client'), mock: mean('mock'), others: mean('others') };
}

/** A markdown table of the stalls, the run's means first; `first_s` is the run's first packet. */
export function stallTable(stalls: Stall[], samples: HostSample[], first_s: number): string {
  const all = meanOf(samples);
  const f = (x: number) => x.toFixed(2);
  const rows = stalls.map((s) => `| ${(s.from_s - first_s).toFixed(1)} | ${((s.to_s - s.from_s) * 1000).toFixed(0)} | ${s.late} | ${s.worst_ms.toFixed(0)} | ${f(s.steal)} | ${f(s.client)} | ${f(s.mock)} | ${f(s.others)} | ${s.busiest || '-'} |`);
  return [
    `stalls (packets over a packet late, joined where their waits overlap), with the cores each took meanwhile (/proc every 100 ms); whole run: steal ${f(all.steal)}, client ${f(all.client)}, mock ${f(all.mock)}, others ${f(all.others)}`,
    '| from s | ms | late packets | worst ms | steal | client | mock | others | busiest others (name pid cores) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The stalls' table of a run's samples file (decodeSamples): the stalls measured from its first packet. */
export function stallReport(file: { sessions: SessionSampleColumns[]; packet_ms: number }, samples: HostSample[]): string {
  let first = Infinity;
  for (const s of file.sessions) if (s.start_s.length > 0) first = Math.min(first, s.start_s[0]);
  return stallTable(stallsOf(file.sessions, samples, file.packet_ms), samples, first);
}

/** The samples beside a run, one JSON line each (`DIR/host.jsonl`), for a closer look than the stalls' table. */
export function writeHostSamples(dir: string, samples: HostSample[]): void {
  writeFileSync(join(dir, 'host.jsonl'), samples.map((h) => JSON.stringify(h)).join('\n') + '\n');
}
