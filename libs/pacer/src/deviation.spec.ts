import { deviationMs, isLate, spreadStarts, staggeredFirst } from './deviation';

describe('deviation', () => {
  it('measures from the send start of packet 0', () => {
    expect(deviationMs(10.165, 10, 2, 80)).toBeCloseTo(5, 9);
    expect(deviationMs(9.995 + 0.16, 10, 2, 80)).toBeCloseTo(-5, 9);
  });
  it('calls late only beyond one packet, either way', () => {
    expect(isLate(80, 80)).toBe(false);
    expect(isLate(80.001, 80)).toBe(true);
    expect(isLate(-81, 80)).toBe(true);
  });
  it('spreads starts evenly over the spread window', () => {
    expect(spreadStarts(1, 4, 80)).toEqual([1, 1.02, 1.04, 1.06]);
    expect(spreadStarts(1, 2, 0)).toEqual([1, 1]);
  });
});

describe('staggeredFirst', () => {
  it('gives jobs started together first lengths from half to whole, a different one for each of as many as half the length', () => {
    const firsts = Array.from({ length: 512 }, (_, n) => staggeredFirst(n, 1024));
    expect(new Set(firsts).size).toBe(512);
    expect(Math.min(...firsts)).toBe(512);
    expect(Math.max(...firsts)).toBeLessThan(1024);
  });
});
