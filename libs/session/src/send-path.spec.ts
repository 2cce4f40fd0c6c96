import { nativeServer } from './native-server.spec-helpers';
import { virtualSession } from './session.spec-helpers';

describe('sendPath in lockstep', () => {
  it('sends each unit once the server reported the one before done, the pace set by the server, not the clock', async () => {
    // 0.4 s of input in 80 ms units; the server reports each unit 200 ms after its input.
    const v = virtualSession({ dialect: { protocol: 'native' }, input_s: 0.4, accept: (s) => nativeServer(s, { unit_lag_ms: 200 }), ctx: { lockstep: { unit_timeout_ms: 5000 } } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, packets_sent: 5, late: 0 });
    const gaps = v.sink.receipts.slice(1).map((r, i) => Math.round((r.start_s - v.sink.receipts[i].start_s) * 1000));
    expect(gaps).toEqual([200, 200, 200, 200]);
  });

  it('a unit the server never reports ends the session at the unit bound', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, input_s: 0.4, accept: (s) => nativeServer(s, { unit_lag_ms: 60_000 }), ctx: { lockstep: { unit_timeout_ms: 1000 } } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'unit_timeout', packets_sent: 1 });
  });
});
