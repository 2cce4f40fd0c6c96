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

  it('reads a large frame by its tail, and the host clock in ms', () => {
    const big = stampSent(`{"delta":"${'A'.repeat(200_000)}"}`, 987654321.123);
    expect(sentStampOf(Buffer.from(big))).toBe(987654321.123);
    const a = monotonicMs();
    expect(monotonicMs()).toBeGreaterThanOrEqual(a);
    expect(Math.abs(a - Number(process.hrtime.bigint()) / 1e6)).toBeLessThan(1000);
  });
});
