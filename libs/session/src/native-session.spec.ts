import { nativeServer, type NativeScript } from './native-server.spec-helpers';
import { receivedOf, virtualSession } from './session.spec-helpers';

/** A native session of `input_s` seconds against the scripted server, in virtual time. */
function native(script: NativeScript = {}, input_s = 0.8) {
  return virtualSession({ dialect: { protocol: 'native' }, input_s, accept: (side) => nativeServer(side, script) });
}

describe('a native session in virtual time', () => {
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

  it('sends the end of input no earlier than packet 0 plus the input sent, as their client waits', async () => {
    const v = native({}, 0.8);
    await v.result(0);
    const first = v.sink.receipts[0].start_s;
    const end = v.sink.sentLines.find((l) => l.event.type === 'sglang.input_audio.end');
    expect(end && Math.round((end.time_s - first) * 1000)).toBe(800);
  });

  it('appends carry seq and t_start_ms from the input bytes, and a short last packet is sent short', async () => {
    const v = native({}, 0.2);
    await v.result();
    const appends = receivedOf(v.server.sessions[0], 'input_audio_buffer.append');
    expect(appends.map((a) => a.sglang)).toEqual([{ seq: 0, t_start_ms: 0 }, { seq: 1, t_start_ms: 80 }, { seq: 2, t_start_ms: 160 }]);
    expect(appends.map((a) => Buffer.from(String(a.audio), 'base64').length)).toEqual([2560, 2560, 1280]);
  });

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
});

describe('a native session whose server misbehaves', () => {
  it('a non-fatal error stops the stream: session.close, session.closed, incomplete as server_error', async () => {
    const v = native({ fault: { after_appends: 3, kind: 'error' } }, 0.8);
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', server_errors: 1, server_error_codes: { engine_failed: 1 } });
    expect(result.server_error).toMatchObject({ code: 'engine_failed', fatal: false });
    expect(result.packets_sent).toBeLessThan(10);
    const sent = v.server.sessions[0].received.map((e) => e.type);
    expect(sent.at(-1)).toBe('session.close');
    expect(sent).not.toContain('sglang.input_audio.end');
    expect(v.sink.errors).toEqual([expect.stringMatching(/^server_error: /)]);
  });

  it('after a fatal error the client sends nothing more and waits (bounded) for session.closed', async () => {
    const v = native({ fault: { after_appends: 2, kind: 'fatal_error' } }, 0.8);
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', server_error: { fatal: true } });
    const sent = v.server.sessions[0].received.map((e) => e.type);
    expect(sent).not.toContain('session.close');
    // No session.closed came: the close bound (5 s) ran out, and that is said.
    expect(result.message).toMatch(/session\.closed/);
  });

  it('a server that closes mid-stream ends the session as server_closed', async () => {
    const v = native({ fault: { after_appends: 4, kind: 'close' } }, 0.8);
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_closed' });
    expect(result.message).toContain('code 1011');
  });

  it('a dropped connection (no close frame) ends the session as server_closed with code 1006', async () => {
    const v = native({ fault: { after_appends: 3, kind: 'drop' } }, 0.8);
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_closed', message: expect.stringContaining('code 1006') });
    expect(v.sink.errors).toEqual([expect.stringMatching(/^server_closed: server closed the session \(code 1006/)]);
  });

  it('a close before session.updated ends the session as server_closed during the handshake, having sent only session.update', async () => {
    const v = native({ close_in_handshake: true });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_closed', message: expect.stringContaining('during the handshake') });
    expect(v.server.sessions[0].received.map((e) => e.type)).toEqual(['session.update']);
  });

  it('a binary frame, a malformed one or a number that is not finite ends the session as malformed_frame', async () => {
    const messages: string[] = [];
    for (const kind of ['binary', 'malformed', 'non_finite'] as const) {
      const result = await native({ fault: { after_appends: 2, kind } }, 0.8).result();
      expect(result).toMatchObject({ completed: false, reason: 'malformed_frame' });
      messages.push(result.message ?? '');
    }
    expect(messages[0]).toMatch(/binary frame of 3 bytes/);
    expect(messages[2]).toMatch(/not finite/);
  });

  it('a server that never drains ends the session as drain_timeout at the drain bound', async () => {
    const v = native({ no_drain: true }, 0.8);
    const t0 = v.time.now;
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'drain_timeout' });
    // The input ends at 0.8 s; the drain bound is 30 s after it.
    expect(v.time.now - t0).toBeGreaterThanOrEqual(30_800);
    expect(v.time.now - t0).toBeLessThan(30_800 + 6_000);
  });

  it('a server that never answers session.close ends the session as close_timeout', async () => {
    const result = await native({ no_closed: true }, 0.8).result();
    expect(result).toMatchObject({ completed: false, reason: 'close_timeout' });
  });
});
