import { markStreamStart } from './mark-stream-start';

describe('markStreamStart', () => {
  it("calls onStart with packet 0's send start only", () => {
    const starts: number[] = [];
    const stage = markStreamStart((s) => starts.push(s));
    for (const seq of [0, 1, 2]) stage({ seq, start_s: 10 + seq * 0.08 });
    expect(starts).toEqual([10]);
  });
});
