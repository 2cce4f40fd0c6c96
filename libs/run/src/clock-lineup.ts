import { readRunRecord } from '@duplex-bench/results';

/** What a run's run.json says of its clocks. */
export interface RunClocks {
  dir: string;
  boot_id: string | null;
  gate_s: number | null;
  gate_clock: { monotonic_s: number; epoch_ms: number } | null;
  clock_offset: { offset_ms: number; uncertainty_ms: number; reference: string } | null;
}

export interface ClockLineup {
  /** `one host`: every run on one kernel's monotonic clock; `reference`: each mapped through its offset to one reference clock. */
  timeline: 'one host' | 'reference';
  /** Per run: its start gate on the common timeline (ms after the earliest) and its offset and uncertainty. */
  runs: Array<{ dir: string; gate_ms: number | null; offset_ms: number | null; uncertainty_ms: number | null; shift_s: number }>;
  /** Largest uncertainty of any run's mapping, ms (0 on one host). */
  uncertainty_ms: number;
  bound_ms: number;
  /**
   * Runs that shared one host's monotonic clock, mapped through their offsets anyway (`reference`):
   * how far apart their mappings put one instant, ms. The check of the mapping: within twice the
   * uncertainty when every offset was measured right.
   */
  same_clock_disagreement_ms?: number;
}

/**
 * Lines the runs of a merge up on one timeline. On one host (one boot id) their monotonic clocks are
 * one clock. Across hosts each run's gate is mapped to the reference clock: its (monotonic, wall)
 * pair at the gate, plus its measured offset to the reference; a run with no offset, or with an
 * uncertainty past `bound_ms`, cannot be placed and is refused (the error names it).
 * Each run's gate on the reference is its local wall time at the gate plus its offset.
 */
export function lineUpClocks(runs: RunClocks[], bound_ms: number, timeline: 'auto' | 'reference' = 'auto'): ClockLineup {
  const boots = new Set(runs.map((r) => r.boot_id));
  // `reference` maps through the offsets even on one host: a check of the mapping against the one clock.
  if (timeline === 'auto' && boots.size === 1 && !boots.has(null)) {
    const gates = runs.map((r) => r.gate_s);
    const first = Math.min(...gates.filter((g): g is number => g !== null));
    return {
      timeline: 'one host',
      runs: runs.map((r) => ({ dir: r.dir, gate_ms: r.gate_s === null ? null : round((r.gate_s - first) * 1000), offset_ms: null, uncertainty_ms: null, shift_s: 0 })),
      uncertainty_ms: 0,
      bound_ms,
    };
  }
  for (const r of runs) {
    if (!r.clock_offset || !r.gate_clock || r.gate_s === null) throw new Error(`${r.dir}: ran on another host with no clock offset to a reference (run it with --time-url); its times cannot be lined up with the others'`);
    if (r.clock_offset.uncertainty_ms > bound_ms) throw new Error(`${r.dir}: its clock offset is known only to ±${r.clock_offset.uncertainty_ms} ms, past the bound of ${bound_ms} ms (--max-clock-uncertainty-ms); not pooled`);
  }
  const references = new Set(runs.map((r) => r.clock_offset?.reference));
  if (references.size > 1) throw new Error(`the runs measured their offsets against different references (${[...references].join(', ')})`);
  const onReference = runs.map((r) => {
    const c = r.gate_clock as { monotonic_s: number; epoch_ms: number };
    return c.epoch_ms + ((r.gate_s as number) - c.monotonic_s) * 1000 + (r.clock_offset?.offset_ms ?? 0);
  });
  const first = Math.min(...onReference);
  // The reference time each run's mapping gives its monotonic zero: on one host, one instant.
  const zeros = runs.map((r) => {
    const c = r.gate_clock as { monotonic_s: number; epoch_ms: number };
    return c.epoch_ms - c.monotonic_s * 1000 + (r.clock_offset?.offset_ms ?? 0);
  });
  const oneHost = boots.size === 1 && !boots.has(null);
  return {
    ...(oneHost ? { same_clock_disagreement_ms: round(Math.max(...zeros) - Math.min(...zeros)) } : {}),
    timeline: 'reference',
    // Run i's monotonic time t is t + shift_s on the first run's clock: both are reference time then.
    runs: runs.map((r, i) => ({ dir: r.dir, gate_ms: round(onReference[i] - first), offset_ms: r.clock_offset?.offset_ms ?? null, uncertainty_ms: r.clock_offset?.uncertainty_ms ?? null, shift_s: (zeros[i] - zeros[0]) / 1000 })),
    uncertainty_ms: Math.max(...runs.map((r) => r.clock_offset?.uncertainty_ms ?? 0)),
    bound_ms,
  };
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/** A run directory's clocks from its run.json (all null where it has none). */
export async function readRunClocks(dir: string): Promise<RunClocks> {
  const run = await readRunRecord(dir);
  return { dir, boot_id: run?.host?.boot_id ?? null, gate_s: run?.gate_s ?? null, gate_clock: run?.gate_clock ?? null, clock_offset: run?.clock_offset ?? null };
}
