import { monotonicMs, sentStampOf, SENT_STAMP_KEY, stampSent } from './sent-stamp';

describe('the send stamp', () => {
  it('goes last in the frame, which stays JSON with every field it had', () => {
    const stamped = stampSent('{"type":"response.output_audio.delta","delta":"AAAA"}', 1234.5678);
    expect(JSON.parse(stamped)).toEqual({ type: 'response.output_audio.delta', delta: 'AAAA', [SENT_STAMP_KEY]: 1234.5678 });
    expect(sentStampOf(Buffer.from(stamped))).toBe(1234.5678);
  });

  it('is read only at the end: none in an unstamped frame, nor in one that names the key inside', () => {
    expect(sentStampOf(Buffer.from('{"type":"x"}'))).toBeNull();
    const inside = `{"text":",\\"${SENT_STAMP_KEY}\\":5","pad":"${'x'.repeat(100)}"}`;
    expect(sentStampOf(Buffer.from(inside))).toBeNull();
    // A last field that only ends like the key, one that is the key's tail, and a stamp that is not a number.
    expect(sentStampOf(Buffer.from(`{"type":"x","x${SENT_STAMP_KEY}":5}`))).toBeNull();
    expect(sentStampOf(Buffer.from(`{"type":"x","bench_sent_ms":5}`))).toBeNull();
    expect(sentStampOf(Buffer.from(`{"type":"x","${SENT_STAMP_KEY}":"5"}`))).toBeNull();
    expect(sentStampOf(Buffer.from(`,"${SENT_STAMP_KEY}":7}`))).toBe(7);
    expect(sentStampOf(Buffer.from(`"${SENT_STAMP_KEY}":7}`))).toBeNull();
  });

  it('reads a stamp as Number reads its text, the plain decimals the mock writes and any other', () => {
    const values = ['25334248.312057', '0.1', '1.', '.5', '-3.25', '7', '123456789012345', '1234567890123456', '1e3', '12.5e-1', '', '-', '1.2.3', ' 4', '0.30000000000000004'];
    for (let k = 0; k < 2000; k++) values.push((Math.random() * 1e8).toFixed(k % 8), String(Math.random() * 1e7));
    for (const v of values) {
      const frame = Buffer.from(`{"type":"x","${SENT_STAMP_KEY}":${v}}`);
      const expected = Number(v);
      expect({ v, stamp: sentStampOf(frame) }).toEqual({ v, stamp: Number.isFinite(expected) ? expected : null });
    }
  });

  it('reads a large frame by its tail, and the host clock in ms', () => {
    const big = stampSent(`{"delta":"${'A'.repeat(200_000)}"}`, 987654321.123);
    expect(sentStampOf(Buffer.from(big))).toBe(987654321.123);
    const a = monotonicMs();
    expect(monotonicMs()).toBeGreaterThanOrEqual(a);
    expect(Math.abs(a - Number(process.hrtime.bigint()) / 1e6)).toBeLessThan(1000);
  });
});
