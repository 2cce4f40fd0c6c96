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
});
