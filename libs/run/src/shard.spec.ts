import { clockPair, parseShard, shardSessions, startAtGate } from './shard';

describe('shards', () => {
  it('parses I/N and refuses an index past the count', () => {
    expect(parseShard('0/4')).toEqual({ index: 0, count: 4 });
    expect(parseShard('3/4')).toEqual({ index: 3, count: 4 });
    for (const bad of ['4/4', '1/0', '-1/2', '1', 'a/b', '1/2/3']) expect(parseShard(bad)).toBeNull();
  });

  it('splits the sessions without a gap or an overlap, the first shards one larger', () => {
    const parts = [0, 1, 2, 3].map((index) => shardSessions(10, { index, count: 4 }));
    expect(parts.map((p) => [p.first, p.count])).toEqual([
      [0, 3],
      [3, 3],
      [6, 2],
      [8, 2],
    ]);
    expect(parts[2].output('/out')).toBe('/out/shard-2');
  });

  it('maps a wall-clock instant onto the monotonic clock, and says when the shard is late', () => {
    const clock = { now_s: () => 500 };
    expect(startAtGate(10_250, clock, () => 10_000)).toEqual({ gate_s: 500.25, late_ms: 0, pair: { monotonic_s: 500, epoch_ms: 10_000 } });
    expect(startAtGate(10_000, clock, () => 10_040)).toMatchObject({ late_ms: 40 });
  });

  it('pairs the monotonic clock with the middle of the narrowest wall readings around it', () => {
    // Monotonic reads 10, 11, 12 s…; the first try is preempted (2 ms between its wall reads), the second is not.
    let t = 10;
    const clock = { now_s: () => t++ };
    const walls = [1000, 1002, 2000.1, 2000.3, 3000, 3000.5, 4000, 4001, 5000, 5000.4];
    let w = 0;
    const pair = clockPair(clock, () => walls[w++]);
    expect(pair.monotonic_s).toBe(11);
    expect(pair.epoch_ms).toBeCloseTo(2000.2, 9);
    expect(w).toBe(10);
  });
});
