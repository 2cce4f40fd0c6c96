import { join } from 'node:path';
import type { Clock } from '@duplex-bench/pacer';

/** Shard `index` of `count`: one of several runs, on hosts of their own, that together make one load. */
export interface Shard {
  index: number;
  count: number;
}

/** `I/N` with 0 <= I < N; null when the text is not one. */
export function parseShard(text: string): Shard | null {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) return null;
  const index = Number(m[1]);
  const count = Number(m[2]);
  return count >= 1 && index < count ? { index, count } : null;
}

/**
 * A shard's part of `total` sessions: `first` (the global number of its first session) and `count`,
 * the first shards one larger when the total does not divide evenly. Session ids and the output
 * directory carry the global numbers and the shard, so shards never collide on one volume.
 */
export function shardSessions(total: number, shard: Shard): { first: number; count: number; output: (root: string) => string } {
  const base = Math.floor(total / shard.count);
  const extra = total % shard.count;
  const first = shard.index * base + Math.min(shard.index, extra);
  return { first, count: base + (shard.index < extra ? 1 : 0), output: (root) => join(root, `shard-${shard.index}`) };
}

/** Tries at a (monotonic, wall) pair; the one read with the least time around it is kept. */
const PAIR_TRIES = 5;

/**
 * A (monotonic, wall) pair read now: the wall clock is read before and after the monotonic one, and
 * the pair is the monotonic reading with the middle of the two wall readings. Of `PAIR_TRIES` tries
 * the narrowest is kept: a thread preempted between two reads (three busy processes on two cores)
 * would carry the preemption into its pair, and the merge holds the pairs of one host to the
 * offsets' uncertainty (a clean clone once read 0.468 ms against 0.379; that cause not shown).
 */
export function clockPair(clock: Clock, wallNow: () => number): { monotonic_s: number; epoch_ms: number } {
  let best = { span: Infinity, monotonic_s: 0, epoch_ms: 0 };
  for (let i = 0; i < PAIR_TRIES; i++) {
    const before = wallNow();
    const monotonic_s = clock.now_s();
    const after = wallNow();
    if (after - before < best.span) best = { span: after - before, monotonic_s, epoch_ms: (before + after) / 2 };
  }
  return { monotonic_s: best.monotonic_s, epoch_ms: best.epoch_ms };
}

/**
 * The start gate of a wall-clock instant (`--start-at`, epoch ms) on this host's monotonic clock,
 * from one (monotonic, wall) pair read now (`clockPair`): every shard waits for the same instant,
 * then runs on its own monotonic clock. `late_ms` > 0 says this shard arrived after the instant; it
 * must not start.
 */
export function startAtGate(start_at_ms: number, clock: Clock, wallNow: () => number = Date.now): { gate_s: number; late_ms: number; pair: { monotonic_s: number; epoch_ms: number } } {
  const pair = clockPair(clock, wallNow);
  const { monotonic_s, epoch_ms } = pair;
  return { gate_s: monotonic_s + (start_at_ms - epoch_ms) / 1000, late_ms: Math.max(0, epoch_ms - start_at_ms), pair };
}
