import { Subject } from 'rxjs';
import { TraceWriteError } from '@duplex-bench/tracer';
import { SendBarrier } from './send-barrier';
import { nativeServer } from './native-server.spec-helpers';
import { virtualSession } from './session.spec-helpers';

describe('a native session: grants, stops and holds', () => {
  it("times the output at the granted rate, unless the user's rate was given: it then overrides the grant", async () => {
    const granted = await virtualSession({ dialect: { protocol: 'native' }, accept: (s) => nativeServer(s, { output_rate: 24_000 }) }).result();
    expect(granted.output_sample_rate).toBe(24_000);
    const grants: unknown[] = [];
    const given = virtualSession({ dialect: { protocol: 'native' }, accept: (s) => nativeServer(s, { output_rate: 24_000 }), ctx: { output_sample_rate: 16_000, output_sample_rate_given: true, onGrant: (g) => grants.push(g) } });
    expect((await given.result()).output_sample_rate).toBe(16_000);
    // The run still hears of the grant (it warns when the two differ).
    expect(grants).toEqual([{ output_sample_rate: 24_000, native_unit_ms: 80 }]);
  });

  it('a stop (SIGINT) after packet 3 ends the input there, drains and closes cleanly, and is incomplete as interrupted', async () => {
    const stop$ = new Subject<void>();
    const v = virtualSession({ dialect: { protocol: 'native' }, input_s: 1.6, accept: (s) => nativeServer(s), ctx: { stop$ } });
    const running = v.result();
    // Packet 0 goes at 0 ms, packet 3 at 240 ms: stop between packet 3 and packet 4.
    v.time.arm(250, () => stop$.next());
    const result = await running;
    expect(result).toMatchObject({ completed: false, reason: 'interrupted', packets_sent: 4, message: 'stopped after 4 of 20 packets' });
    const types = v.server.sessions[0].received.map((e) => e.type);
    expect(types.slice(-2)).toEqual(['sglang.input_audio.end', 'session.close']);
  });

  it("holds the end of input until every session of the run sent its last packet, and leaves the hold out of the server's figures", async () => {
    const allSent = new SendBarrier();
    allSent.expect(2);
    const v = virtualSession({ dialect: { protocol: 'native' }, input_s: 0.8, accept: (s) => nativeServer(s), ctx: { allSent } });
    const running = v.result();
    // The other session of the run sends its last packet 500 ms after this one's input played out.
    v.time.arm(1300, () => allSent.done());
    const result = await running;
    const first = v.sink.receipts[0].start_s;
    const end = v.sink.sentLines.find((l) => l.event.type === 'sglang.input_audio.end');
    expect(Math.round(((end?.time_s ?? 0) - first) * 1000)).toBe(1300);
    expect(result.completed).toBe(true);
    expect(result.response_metrics?.input_end_held_ms).toBeCloseTo(500, 0);
  });

  it('a trace that cannot be written makes a complete session incomplete as trace_write_failed', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, accept: (s) => nativeServer(s) });
    v.sink.failClose = new TraceWriteError('/out/sessions/s0/trace.jsonl', 'ENOSPC', 'cannot write /out/sessions/s0/trace.jsonl: ENOSPC');
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'trace_write_failed', message: expect.stringContaining('trace.jsonl') });
    expect(v.sink.closed).toBe(true);
  });
});

describe('a native session in lockstep', () => {
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
