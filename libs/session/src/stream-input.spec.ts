import { Subject } from 'rxjs';
import { silencePackets } from '@duplex-bench/audio';
import { nativeServer } from './native-server.spec-helpers';
import { native, receivedOf, virtualSession } from './session.spec-helpers';

describe('streamInput: the streaming state', () => {
  it('opens, streams every packet on its deadline, ends its input, drains and closes: complete', async () => {
    const v = native({}, 0.8);
    const result = await v.result(100);
    expect(result).toMatchObject({ completed: true, packets_sent: 10, late: 0, violation: false, server_errors: 0, native_unit_ms: 80, output_sample_rate: 22_050 });
    expect(result.drain).toEqual({ accepted_end_ms: 800, consumed_ms: 800, discarded_ms: 0, padding_ms: 0 });
    const side = v.server.sessions[0];
    expect(side.received.map((e) => e.type)).toEqual(['session.update', ...Array(10).fill('input_audio_buffer.append'), 'sglang.input_audio.end', 'session.close']);
    // Each packet went at its absolute deadline: packet 0 at the start, packet N N × 80 ms later.
    const starts = v.sink.receipts.map((r) => Math.round((r.start_s - v.sink.receipts[0].start_s) * 1000));
    expect(starts).toEqual([0, 80, 160, 240, 320, 400, 480, 560, 640, 720]);
    // The client's close frame follows session.closed, and the trace is closed.
    expect(side.clientClose?.code).toBe(1000);
    expect(v.sink.closed).toBe(true);
  });

  it('appends carry seq and t_start_ms from the input bytes, and a short last packet is sent short', async () => {
    const v = native({}, 0.2);
    await v.result();
    const appends = receivedOf(v.server.sessions[0], 'input_audio_buffer.append');
    expect(appends.map((a) => a.sglang)).toEqual([{ seq: 0, t_start_ms: 0 }, { seq: 1, t_start_ms: 80 }, { seq: 2, t_start_ms: 160 }]);
    expect(appends.map((a) => Buffer.from(String(a.audio), 'base64').length)).toEqual([2560, 2560, 1280]);
  });

  it('a source that ends its input early (a conversation played once) ends it there, complete, its units those of the input sent', async () => {
    // Given 2 s (the script's bound), the source says its input is over before packet 5 (400 ms).
    const bound = silencePackets(2, 80);
    const v = virtualSession({ dialect: { protocol: 'native' }, packets: { ...bound, inputOverAt: (seq: number) => seq >= 5 }, accept: (s) => nativeServer(s) });
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, packets_sent: 5 });
    expect(v.server.sessions[0].received.map((e) => e.type).slice(-2)).toEqual(['sglang.input_audio.end', 'session.close']);
    // Five 80 ms units were input and done; the 20 of the bound never sent are neither expected nor missed.
    expect(v.ctx.units?.counts()).toMatchObject({ expected: 5, done: 5, missed: 0 });
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
    // The four units sent are expected; the 16 the client chose not to send are neither expected nor missed.
    expect(v.ctx.units?.counts()).toMatchObject({ expected: 4, missed: 0 });
  });
});
