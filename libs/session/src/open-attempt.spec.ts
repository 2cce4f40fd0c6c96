import { nativeServer } from './native-server.spec-helpers';
import { openaiServer } from './openai-server.spec-helpers';
import { virtualSession, OPENAI, VLLM } from './session.spec-helpers';

describe('openAttempt: connect, handshake, grant', () => {
  it("times the output at the granted rate, unless the user's rate was given: it then overrides the grant", async () => {
    const granted = await virtualSession({ dialect: { protocol: 'native' }, accept: (s) => nativeServer(s, { output_rate: 24_000 }) }).result();
    expect(granted.output_sample_rate).toBe(24_000);
    const grants: unknown[] = [];
    const given = virtualSession({ dialect: { protocol: 'native' }, accept: (s) => nativeServer(s, { output_rate: 24_000 }), ctx: { output_sample_rate: 16_000, output_sample_rate_given: true, onGrant: (g) => grants.push(g) } });
    expect((await given.result()).output_sample_rate).toBe(16_000);
    // The run still hears of the grant (it warns when the two differ).
    expect(grants).toEqual([{ output_sample_rate: 24_000, native_unit_ms: 80 }]);
  });

  it('a server that never answers the upgrade runs into the connect bound: connect_timeout', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, answer: () => 'hang', ctx: { connect_timeout_ms: 2000 } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'connect_timeout' });
  });

  it('a server that accepts and says nothing runs into the handshake bound: handshake_timeout', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, ctx: { handshake_timeout_ms: 3000 } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'handshake_timeout' });
  });

  it('a server that waits for the client to speak first (vLLM-Omni) runs into the handshake bound', async () => {
    const v = virtualSession({ dialect: OPENAI, accept: () => undefined, ctx: { handshake_timeout_ms: 4000 } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'handshake_timeout', packets_sent: 0 });
  });

  it('an error before session.created (the opening refused) ends the session without session.close: there is no session to close', async () => {
    const v = virtualSession({
      dialect: VLLM,
      accept: (side) => side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'error', error: 'ref_audio is required', code: 'ref_audio_required' })),
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', server_error: { code: 'ref_audio_required' } });
    expect(v.server.sessions[0].received.map((e) => e.type)).toEqual(['session.update']);
  });

  it('lockstep pacing without a native unit in the grant fails the session at its opening', async () => {
    const v = virtualSession({ dialect: OPENAI, accept: (side) => openaiServer(side), ctx: { lockstep: { unit_timeout_ms: 1000 } } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', message: expect.stringContaining('lockstep pacing needs the native_unit_ms') });
  });
});
