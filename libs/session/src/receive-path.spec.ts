import { native } from './session.spec-helpers';

describe('receivePath: what a received frame feeds', () => {
  it('times each unit.done from when its input was complete (unit lag)', async () => {
    const v = native({ unit_lag_ms: 30 }, 0.8);
    const result = await v.result();
    expect(result.completed).toBe(true);
    const units = v.ctx.units as NonNullable<typeof v.ctx.units>;
    expect(units.counts()).toEqual({ unit_ms: 80, expected: 10, done: 10, missed: 0, done_before_input: 0 });
    // 30 ms of server lag on each unit, read on the virtual clock (µs histogram).
    expect(units.lag.minNonZeroValue).toBe(30_000);
    expect(units.lag.maxValue).toBe(30_000);
  });

  it('counts event types the dialect does not define', async () => {
    const v = native({ unknown_type: 'sglang.debug.note' });
    await v.result();
    expect(v.ctx.unknownEvents.get('sglang.debug.note')).toBe(1);
  });

  it("counts native receipts that repeat or skip a seq, and goes on as sglang-omni's client does", async () => {
    // Append 2 answered twice; append 5 never, so append 6's receipt skips it.
    const v = native({ receipts: (seq) => (seq === 2 ? [2, 2] : seq === 5 ? [] : [seq]) }, 0.8);
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, dialect_events: { receipt_seq_repeated: 1, receipt_seq_skipped: 1 } });
    const clean = await native({}, 0.8).result();
    expect(clean.dialect_events).toBeUndefined();
  });
});
