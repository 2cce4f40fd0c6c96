import { cpuUsage, memoryUsage } from 'node:process';
import type { Histogram } from '@duplex-bench/metrics';
import { counter, gauge, hdrHistogram, type Family } from './families';

/** The client process's own health: what tells a server's latency from the client's stall. */
export interface ClientHealthSource {
  /** Event-loop lag samples, µs (the loop monitor's histogram). */
  loopLag(): Histogram;
  /** Garbage-collection pauses, where the command watches them. */
  gc?(): { count: number; total_ms: number };
  /** Bytes the trace writer thread has not written yet. */
  backlogBytes?(): number;
}

const LAG_BUCKETS_S = [0.001, 0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56];

export function clientFamilies(c: ClientHealthSource): Family[] {
  const cpu = () => cpuUsage();
  return [
    hdrHistogram('duplex_bench_event_loop_lag_seconds', 'Client event-loop lag, sampled every 10 ms (client clock): a stall here is the client, not the server', LAG_BUCKETS_S, c.loopLag),
    ...(c.gc ? gcFamilies(c.gc) : []),
    counter('duplex_bench_cpu_seconds_total', 'Client process CPU time (process.cpuUsage), by mode', () => {
      const u = cpu();
      return [
        { value: u.user / 1e6, labels: { mode: 'user' } },
        { value: u.system / 1e6, labels: { mode: 'system' } },
      ];
    }),
    gauge('duplex_bench_resident_memory_bytes', 'Client resident set size (process.memoryUsage.rss)', () => memoryUsage.rss()),
    ...(c.backlogBytes ? [gauge('duplex_bench_trace_backlog_bytes', 'Trace and record bytes handed to the writer thread and not yet written', c.backlogBytes)] : []),
  ];
}

function gcFamilies(gc: () => { count: number; total_ms: number }): Family[] {
  return [
    counter('duplex_bench_gc_pauses_total', 'Client garbage-collection pauses (perf_hooks gc entries)', () => gc().count),
    counter('duplex_bench_gc_pause_seconds_total', 'Client time spent in garbage-collection pauses (perf_hooks gc entries)', () => gc().total_ms / 1000),
  ];
}
