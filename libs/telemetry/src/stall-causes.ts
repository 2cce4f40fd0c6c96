import type { ThreadSample } from './proc-sample';

/** What stopped the loop: a GC pause, the disk, a CPU it waited for, its own work, or a sleep in the kernel. */
export type StallCause = 'gc' | 'disk_wait' | 'cpu_wait' | 'busy' | 'blocked' | 'unaccounted' | 'unsampled';

/** A loop stall: the 10 ms timer woke `ms` late at `end_s` (monotonic), so the loop was held over [end_s − ms, end_s]. */
export interface LoopStall {
  end_s: number;
  ms: number;
}

export interface GcPause {
  start_s: number;
  ms: number;
}

export interface StallAttribution {
  /** Start of the stall, monotonic seconds. */
  start_s: number;
  ms: number;
  cause: StallCause;
  evidence: {
    /** GC pause time inside the stall (perf_hooks). */
    gc_ms: number;
    /** Sampler looks inside the stall, and how many found the thread in each state. */
    samples: number;
    states: Record<string, number>;
    /** The kernel functions a D-state thread waited in, most seen first. */
    wchan: string[];
    /** From the last look before to the first after: time on a CPU and waiting for one (schedstat), ms. */
    run_ms: number | null;
    wait_ms: number | null;
    span_ms: number | null;
  };
}

/** Share of the stall a cause must account for. */
const MAJORITY = 0.5;

/**
 * Gives each stall a cause, in this order: `gc` when GC pauses cover half of it; `disk_wait` when
 * the sampler found the loop in state D in at least a fifth of its looks (at least 2); then, from
 * schedstat across it, the largest share of its time: waiting in the run queue (`cpu_wait`), on a
 * CPU (`busy`), or neither: asleep in the kernel (`blocked`, when its looks found it sleeping) or,
 * when its looks found it runnable, `unaccounted` (time the guest kernel does not see, such as a
 * hypervisor taking the vCPU); `unsampled` when no look brackets it, or the looks around it are more than twice as far apart as it is long
 * (the sampler itself was held). `samples` are one thread's, in time order.
 */
export function attributeStalls(stalls: LoopStall[], pauses: GcPause[], samples: ThreadSample[]): StallAttribution[] {
  // Both in time order, searched by bisection: an hour's looks and pauses against thousands of stalls.
  const byStart = [...pauses].sort((x, y) => x.start_s - y.start_s);
  const longest_s = byStart.reduce((m, p) => Math.max(m, p.ms / 1000), 0);
  const firstAt = <T>(a: T[], t_s: number, key: (x: T) => number) => {
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (key(a[mid]) < t_s) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return stalls.map((s) => {
    const a = s.end_s - s.ms / 1000;
    const b = s.end_s;
    let gc_ms = 0;
    for (let i = firstAt(byStart, a - longest_s, (p) => p.start_s); i < byStart.length && byStart[i].start_s < b; i++) {
      const p = byStart[i];
      const overlap = Math.min(b, p.start_s + p.ms / 1000) - Math.max(a, p.start_s);
      if (overlap > 0) gc_ms += overlap * 1000;
    }
    const from = firstAt(samples, a, (x) => x.t_s);
    const to = firstAt(samples, b + 1e-9, (x) => x.t_s);
    const inside = samples.slice(from, to);
    const states: Record<string, number> = {};
    const wchans = new Map<string, number>();
    for (const x of inside) {
      states[x.state] = (states[x.state] ?? 0) + 1;
      if (x.state === 'D' && x.wchan) wchans.set(x.wchan, (wchans.get(x.wchan) ?? 0) + 1);
    }
    // The last look at or before the stall's start, and the first at or after its end.
    const before = from > 0 ? samples[from - 1] : samples[from]?.t_s === a ? samples[from] : undefined;
    const after = samples[firstAt(samples, b, (x) => x.t_s)];
    const span_ms = before && after ? (after.t_s - before.t_s) * 1000 : null;
    const run_ms = before && after ? after.run_ms - before.run_ms : null;
    const wait_ms = before && after ? after.wait_ms - before.wait_ms : null;
    const d = states.D ?? 0;
    let cause: StallCause;
    if (gc_ms >= MAJORITY * s.ms) cause = 'gc';
    else if (d >= 2 && d >= 0.2 * inside.length) cause = 'disk_wait';
    // No bracketing looks, or looks so far apart (the sampler itself held) that the stall is a small part of them.
    else if (span_ms === null || run_ms === null || wait_ms === null || span_ms > 2 * s.ms + 20) cause = 'unsampled';
    else {
      const neither_ms = span_ms - run_ms - wait_ms;
      if (wait_ms >= run_ms && wait_ms >= neither_ms) cause = 'cpu_wait';
      else if (run_ms >= neither_ms) cause = 'busy';
      else {
        // Asleep or runnable, by the looks inside it, else by the two around it.
        const looked = inside.length > 0 ? inside : [before, after].filter((x): x is ThreadSample => x !== undefined);
        const asleep = looked.filter((x) => x.state === 'S' || x.state === 'D').length;
        cause = asleep > looked.length - asleep ? 'blocked' : 'unaccounted';
      }
    }
    const r = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
    return {
      start_s: a,
      ms: s.ms,
      cause,
      evidence: {
        gc_ms: Math.round(gc_ms * 1000) / 1000,
        samples: inside.length,
        states,
        wchan: [...wchans].sort((x, y) => y[1] - x[1]).map(([w]) => w),
        run_ms: r(run_ms),
        wait_ms: r(wait_ms),
        span_ms: r(span_ms),
      },
    };
  });
}

/** The sampler's own account, from the last line of its file. */
export interface SamplerFooter {
  pids: number[];
  interval_ms: number;
  looks: number;
  late_looks: number;
  wall_s: number;
  cpu_s: number;
  cpu_cores: number | null;
  ended_by: string;
}

/** The summary's `stalls` block. */
export interface StallsSummary {
  threshold_ms: number;
  count: number;
  by_cause: Record<StallCause, number>;
  /** Every stall (up to 1,000), its start in seconds after the start gate. */
  list: Array<Omit<StallAttribution, 'start_s'> & { t_s: number; process?: string }>;
  sampler: (SamplerFooter & { origin: string }) | null;
  measurement_origin: string;
}

export function stallsSummary(attributed: StallAttribution[], threshold_ms: number, footer: SamplerFooter | null, gate_s: number): StallsSummary {
  const by_cause: Record<StallCause, number> = { gc: 0, disk_wait: 0, cpu_wait: 0, busy: 0, blocked: 0, unaccounted: 0, unsampled: 0 };
  for (const a of attributed) by_cause[a.cause]++;
  return {
    threshold_ms,
    count: attributed.length,
    by_cause,
    list: attributed.slice(0, 1000).map(({ start_s, ...rest }) => ({ t_s: Math.round((start_s - gate_s) * 1000) / 1000, ...rest })),
    sampler: footer ? { ...footer, origin: 'a process of its own, reading /proc/PID/task/PID/{stat,schedstat,wchan} of each probe process every interval_ms; its CPU is its own, not the probe\'s' } : null,
    measurement_origin:
      'client: each wake of the 10 ms loop timer later than threshold_ms is a stall; its cause: gc when perf_hooks GC pauses cover half of it, disk_wait when the sampler found the loop thread in state D in a fifth of its looks (wchan: where); else the largest share of the stall by schedstat: cpu_wait (in the run queue), busy (on a CPU), or neither: blocked (asleep in the kernel by its looks) or unaccounted (runnable by its looks: time the guest kernel does not see, such as a hypervisor taking the vCPU); unsampled when no look brackets it or the looks around it are more than twice its length apart',
  };
}

/** Several processes' stall blocks as one (`run --processes`): counts summed, the lists kept apart by process. */
export function poolStalls(parts: Array<{ process: string; stalls: StallsSummary | undefined }>, footer: SamplerFooter | null): StallsSummary | undefined {
  const present = parts.filter((p): p is { process: string; stalls: StallsSummary } => p.stalls !== undefined);
  if (present.length === 0) return undefined;
  const by_cause: Record<StallCause, number> = { gc: 0, disk_wait: 0, cpu_wait: 0, busy: 0, blocked: 0, unaccounted: 0, unsampled: 0 };
  for (const p of present) for (const [k, n] of Object.entries(p.stalls.by_cause)) by_cause[k as StallCause] += n;
  const first = present[0].stalls;
  return {
    threshold_ms: first.threshold_ms,
    count: present.reduce((n, p) => n + p.stalls.count, 0),
    by_cause,
    list: present.flatMap((p) => p.stalls.list.map((x) => ({ ...x, process: p.process }))).slice(0, 1000),
    sampler: footer ? { ...footer, origin: first.sampler?.origin ?? 'the external sampler' } : null,
    measurement_origin: first.measurement_origin,
  };
}
