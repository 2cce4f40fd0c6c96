// CPU pinning for a benchmark's processes (`taskset`, Linux): `--pin CLIENT_CPU:MOCK_CPU`.
//
// `main` (the default) gives the client's main thread, the one that runs its loop, a CPU to itself;
// the client's other threads (the collector's helpers, the trace writer), the processes it starts
// (the kit's --sampler) and the mock go to the other. `all` binds the client's every thread to its
// CPU: its helper threads then queue behind its loop (measured: 91 of 95 loop stalls were the loop
// waiting for that CPU, docs/reliability.md "An hour").
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface Pins {
  client: string;
  mock: string;
  threads: 'main' | 'all';
}

/** `--pin C:M` and `--pin-threads main|all` as given; null without `--pin`. Throws a one-line error naming the flag. */
export function parsePins(tool: string, pin: string | undefined, threads = 'main'): Pins | null {
  if (pin === undefined) return null;
  const m = /^(\d+):(\d+)$/.exec(pin);
  if (!m) throw new Error(`${tool}: --pin takes CLIENT_CPU:MOCK_CPU (0:1), not ${pin}`);
  if (threads !== 'main' && threads !== 'all') throw new Error(`${tool}: --pin-threads takes main or all, not ${threads}`);
  // Checked before any process starts, so a pin that cannot be made never leaves one running.
  for (const cpu of [m[1], m[2]]) {
    const r = spawnSync('taskset', ['-c', cpu, 'true'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool}: --pin ${pin}: taskset -c ${cpu} fails here (${(r.stderr ?? r.error?.message ?? '').trim() || `status ${r.status}`})`);
  }
  return { client: m[1], mock: m[2], threads };
}

/**
 * Moves this bench script (and what it started already: tsx's esbuild service) to the mock's CPU.
 * Left free, its /proc samples (10 a second) and pin checks (20) woke on the loop's CPU too: in the
 * hour of 2026-12-06 the loop's thread was preempted 50 times a second then, 17 once it was moved.
 */
export function pinBench(p: Pins): void {
  pinProcess(process.pid, p.mock);
  for (const tid of threadsOf(process.pid)) for (const kid of childrenOf(process.pid, tid)) pinProcess(Number(kid), p.mock);
}

/** What a table's heading says of the pins. */
export function pinsLine(p: Pins | null): string {
  if (!p) return '';
  return p.threads === 'all' ? `client on CPU ${p.client}, mock on CPU ${p.mock}` : `the client's main thread alone on CPU ${p.client}; its other threads, its children and the mock on CPU ${p.mock}`;
}

/** Binds every thread of a process (and those it starts later, which inherit it) to `cpu`; parsePins has checked taskset works. */
export function pinProcess(pid: number | undefined, cpu: string): void {
  spawnSync('taskset', ['-a', '-cp', cpu, String(pid)]);
}

/**
 * Pins a client just started; returns the function that stops watching it. Threads and processes
 * it starts inherit its main thread's CPU, so each new one is moved to the mock's within 50 ms:
 * moved once at 5 s instead, the second of session opens had them beside the loop (2,624 packets
 * late in the first 1.3 s).
 */
export function pinClient(child: ChildProcess, p: Pins): () => void {
  const pid = child.pid as number;
  pinProcess(pid, p.threads === 'all' ? p.client : p.mock);
  if (p.threads === 'main') pinThread(pid, p.client);
  const done = new Set<string>(threadsOf(pid));
  const timer = setInterval(() => {
    for (const kid of childrenOf(pid, pid)) {
      if (done.has(`process ${kid}`)) continue;
      done.add(`process ${kid}`);
      pinProcess(Number(kid), p.mock);
    }
    if (p.threads === 'all') return;
    // The threads there at the start were moved with the process; each later one is moved once.
    for (const tid of threadsOf(pid)) {
      if (done.has(tid)) continue;
      done.add(tid);
      pinThread(tid, p.mock);
    }
  }, 50);
  return () => clearInterval(timer);
}

/** Binds one thread (its id) to `cpu`. */
function pinThread(tid: number | string, cpu: string): void {
  spawnSync('taskset', ['-cp', cpu, String(tid)]);
}

/** The processes one thread of `pid` started (/proc/PID/task/TID/children); none once it is gone. */
function childrenOf(pid: number, tid: number | string): string[] {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

/** A process's thread ids (/proc/PID/task); none once it is gone. */
function threadsOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}
