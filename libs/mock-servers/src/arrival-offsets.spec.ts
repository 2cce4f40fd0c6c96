import { ArrivalOffsets } from './arrival-offsets';

const deviations = (a: ArrivalOffsets) => {
  const out: number[] = [];
  a.forEachDeviation((d) => out.push(d));
  return out;
};

describe('ArrivalOffsets', () => {
  it('measures each packet against the earliest offset, so a late packet 0 does not shift the others', () => {
    const a = new ArrivalOffsets();
    // Packet 0 arrives 50 ms after its media time (the start burst), the rest on time.
    for (const offset of [50, 0, 0, 0]) a.add(offset);
    expect(deviations(a)).toEqual([50, 0, 0, 0]);
  });

  it('keeps every offset as the session grows past its first buffer', () => {
    const a = new ArrivalOffsets();
    for (let i = 0; i < 1000; i++) a.add(i === 700 ? 90 : 10);
    const d = deviations(a);
    expect(a.count).toBe(1000);
    expect(d.filter((x) => x === 80)).toHaveLength(1);
    expect(d.filter((x) => x === 0)).toHaveLength(999);
  });

  it('keeps deviations to well under a µs on a clock days from zero, and none below 0', () => {
    const a = new ArrivalOffsets();
    // A host clock 51,554 s in: each offset is about 5e7 ms, its jitter a few ms in odd fractions.
    const base = 51_554_138.515;
    const jitter = [3.2117, 0.0004, 1.75, 0.3333, 7.0001, 0.0004];
    for (const j of jitter) a.add(base + j);
    const d = deviations(a);
    d.forEach((x, i) => expect(Math.abs(x - (jitter[i] - 0.0004))).toBeLessThan(0.001));
    expect(Math.min(...d)).toBe(0);
  });
});
