import { ReceiptColumns, receiptsJson } from './receipts-json';

const times = (seq: number) => ({
  scheduled_s: 1000 + seq * 0.08,
  start_s: 1000 + seq * 0.08 + 0.000125,
  completed_s: 1000 + seq * 0.08 + 0.00025 + seq * 1e-9,
});

describe('receipts JSON', () => {
  it('keeps every receipt in order through several growths, trimmed to size', () => {
    const columns = new ReceiptColumns();
    for (let seq = 0; seq < 1000; seq++) {
      const t = times(seq);
      columns.push(`s1_append_${seq}`, seq, t.scheduled_s, t.start_s, t.completed_s);
    }
    const block = columns.take();
    expect(block.size).toBe(1000);
    expect(block.seq).toBeInstanceOf(Int32Array);
    expect(block.seq).toHaveLength(1000);
    expect(block.times).toBeInstanceOf(Float64Array);
    expect(block.times).toHaveLength(3000);

    const text = receiptsJson(block);
    expect(text).not.toMatch(/\s/);
    const file = JSON.parse(text) as { appends: Array<Record<string, unknown>> };
    expect(Object.keys(file)).toEqual(['appends']);
    expect(file.appends).toEqual(Array.from({ length: 1000 }, (_, seq) => ({ event_id: `s1_append_${seq}`, seq, ...times(seq) })));
    expect(Object.keys(file.appends[0])).toEqual(['event_id', 'seq', 'scheduled_s', 'start_s', 'completed_s']);
  });

  it('writes an empty list when nothing was sent', () => {
    expect(receiptsJson(new ReceiptColumns().take())).toBe('{"appends":[]}');
  });

  it('escapes an event id that needs it', () => {
    const columns = new ReceiptColumns();
    columns.push('a"b\\c', 0, 1, 2, 3);
    expect(JSON.parse(receiptsJson(columns.take())).appends[0]).toEqual({ event_id: 'a"b\\c', seq: 0, scheduled_s: 1, start_s: 2, completed_s: 3 });
  });
});
