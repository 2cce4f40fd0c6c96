import { TransportError, type IncompleteReason } from './errors';

describe('TransportError: a session-level fault, coded by how the session ends', () => {
  it.each<[IncompleteReason, string]>([
    ['connect_timeout', 'TRANSPORT_CONNECT_TIMEOUT'],
    ['server_closed', 'TRANSPORT_SERVER_CLOSED'],
    ['client_protocol_error', 'TRANSPORT_CLIENT_PROTOCOL_ERROR'],
  ])('a %s fault has the code %s', (reason, code) => {
    const err = new TransportError(reason, 'no');
    expect(err.reason).toBe(reason);
    expect(err.code).toBe(code);
  });

  it('is an Error named TransportError: its message and stack say so', () => {
    const err = new TransportError('drain_timeout', 'no sglang.input_audio.drained within 30000 ms');
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toBe('TransportError: no sglang.input_audio.drained within 30000 ms');
    expect(err.stack?.split('\n')[0]).toBe('TransportError: no sglang.input_audio.drained within 30000 ms');
  });

  it("carries the context it was given, and an empty one when it was given none", () => {
    const info = { url: 'ws://h/v1/realtime', session_id: 's3', status: 503, attempts: 4 };
    expect(new TransportError('admission_refused', 'full', info).info).toEqual({ url: 'ws://h/v1/realtime', session_id: 's3', status: 503, attempts: 4 });
    const bare = new TransportError('send_failed', 'send failed');
    expect(bare.info).toEqual({});
    // Each error has a context of its own.
    expect(bare.info).not.toBe(new TransportError('send_failed', 'send failed').info);
  });
});
