import { OverlapCounter, peakOverlap } from './overlap';

describe('peakOverlap', () => {
  it('is 0 with no intervals and 1 with one', () => {
    expect(peakOverlap([])).toBe(0);
    expect(peakOverlap([[1, 2]])).toBe(1);
  });

  it('does not count touching intervals as overlapping', () => {
    expect(
      peakOverlap([
        [0, 1],
        [1, 2],
        [2, 3],
      ]),
    ).toBe(1);
  });

  it('counts intervals open at one instant, in any input order', () => {
    expect(
      peakOverlap([
        [5, 9],
        [0, 10],
        [1, 2],
        [1.5, 6],
        [9.5, 12],
      ]),
    ).toBe(3);
    expect(
      peakOverlap([
        [0, 4],
        [0, 4],
        [0, 4],
      ]),
    ).toBe(3);
  });
});

describe('OverlapCounter', () => {
  it('keeps the peak after streams close', () => {
    const counter = new OverlapCounter();
    counter.open();
    counter.open();
    counter.close();
    counter.open();
    counter.open();
    counter.close();
    counter.close();
    expect(counter.active).toBe(1);
    expect(counter.peak).toBe(3);
  });
});
