import { native, vllm } from './session.spec-helpers';

describe("closeAfterFault: the dialect's close after a fault, bounded", () => {
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

  it('any other refusal of what the client sent ends the session as client_protocol_error, saying session.close', async () => {
    const v = vllm({ ack_error: 'playback_item_mismatch' });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'client_protocol_error', server_error: { code: 'playback_item_mismatch' } });
    expect(v.server.sessions[0].received.map((e) => e.type)).toContain('session.close');
  });

  it('a server that never answers session.close ends the session as close_timeout', async () => {
    const result = await native({ no_closed: true }, 0.8).result();
    expect(result).toMatchObject({ completed: false, reason: 'close_timeout' });
  });
});
