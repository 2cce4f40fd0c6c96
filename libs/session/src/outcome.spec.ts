import { ProtocolError } from '@duplex-bench/protocol';
import { TransportError } from '@duplex-bench/transport';
import { TraceWriteError } from '@duplex-bench/tracer';
import { endedBy, reasonOf } from './outcome';
import { openaiServer } from './openai-server.spec-helpers';
import { native, virtualSession, OPENAI } from './session.spec-helpers';

describe('reasonOf and endedBy: what ended a session', () => {
  it('maps each lib\'s error to its reason, and a close after a server error to that error', () => {
    expect(reasonOf(new TransportError('drain_timeout', 'no drained', { url: 'u' }))).toEqual({ reason: 'drain_timeout', message: 'no drained' });
    expect(reasonOf(new ProtocolError('MALFORMED_FRAME', 'bad json'))).toEqual({ reason: 'malformed_frame', message: 'bad json' });
    expect(reasonOf(new ProtocolError('SERVER_ERROR', 'boom'))).toEqual({ reason: 'server_error', message: 'boom' });
    expect(reasonOf(new TraceWriteError('/t', 'EIO', 'EIO'))).toEqual({ reason: 'trace_write_failed', message: expect.stringContaining('/t') });
    expect(reasonOf(new Error('socket hang up'))).toEqual({ reason: 'server_closed', message: 'socket hang up' });
    const closed = new TransportError('server_closed', 'server closed the session (code 1011)', { url: 'u' });
    expect(endedBy(closed, new ProtocolError('SERVER_ERROR', 'engine died'))).toEqual({ reason: 'server_error', message: 'engine died; then server closed the session (code 1011)' });
    expect(endedBy(closed, null)).toEqual({ reason: 'server_closed', message: 'server closed the session (code 1011)' });
  });
});

describe('a native session whose server misbehaves', () => {
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
});

describe('an openai session whose server misbehaves', () => {
  it('a server that stops answering ends the session as drain_timeout at the drain bound', async () => {
    const v = virtualSession({
      dialect: OPENAI,
      // Grants, then never answers anything again: the first response.create is never answered.
      accept: (side) => {
        side.send({ type: 'session.created', session: {} });
        side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'session.updated', session: {} }));
      },
      ctx: { drain_timeout_ms: 2000 },
    });
    const t0 = v.time.now;
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'drain_timeout' });
    // The input ends at 0.8 s; the bound is 2 s after it.
    expect(v.time.now - t0).toBeGreaterThanOrEqual(2800);
    expect(v.time.now - t0).toBeLessThan(2800 + 3000);
  });

  it('an error answering session.update ends the session at the handshake as server_error', async () => {
    const v = virtualSession({
      dialect: OPENAI,
      accept: (side) => {
        side.send({ type: 'session.created', session: {} });
        side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'error', error: { type: 'invalid_request_error', code: 'unsupported_audio_format', message: 'no' } }));
      },
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', packets_sent: 0, message: expect.stringContaining('unsupported_audio_format') });
  });

  it('a server that closes the socket after an error event: server_error, with the error and the close in the message', async () => {
    const v = virtualSession({
      dialect: OPENAI,
      accept: (side) => {
        openaiServer(side);
        side.later(300, () => {
          side.send({ type: 'error', error: { type: 'server_error', code: 'engine_dead', message: 'engine died' } });
          side.close(1011, 'engine');
        });
      },
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error' });
    expect(result.message).toMatch(/engine_dead.*then server closed the session \(code 1011/);
  });
});
