import { join } from 'node:path';
import { speechDir } from '@duplex-bench/audio';
import type { RealtimeSession, SessionResult } from '@duplex-bench/session';
import { TransportError } from '@duplex-bench/transport';
import { openFirstThenAll, runPackets } from './open-sessions';

/** A session whose opening the spec settles by hand: `refuse()` tells a full server's refusal, `fail(err)` or `ok()` ends it. */
function fakeSession(id: string, log: string[]) {
  let settle: { ok: () => void; fail: (err: unknown) => void } | null = null;
  let refused: (() => void) | undefined;
  const session = {
    id,
    open: (hooks: { refused?: () => void } = {}) => {
      log.push(`${id} open`);
      refused = hooks.refused;
      return new Promise<void>((ok, fail) => (settle = { ok, fail }));
    },
    abandon: async (err: unknown): Promise<SessionResult> => ({ id, completed: false, reason: (err as TransportError).reason }) as unknown as SessionResult,
  };
  return { session: session as unknown as RealtimeSession, refuse: () => refused?.(), ok: () => settle?.ok(), fail: (err: unknown) => settle?.fail(err) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('openFirstThenAll', () => {
  it("starts the others once a full server refused the first session (it is reachable), and keeps the first's own wait", async () => {
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fakeSession(id, log));
    const opening = openFirstThenAll([a.session, b.session, c.session], 4, () => false);
    await tick();
    expect(log).toEqual(['a open']);
    a.refuse();
    await tick();
    expect(log).toEqual(['a open', 'b open', 'c open']);
    b.ok();
    c.ok();
    a.fail(new TransportError('admission_refused', 'server refused the session with HTTP 503 13 times'));
    const { opened, failed, unreachable } = await opening;
    expect(unreachable).toBeNull();
    expect(opened.map((s) => s.id)).toEqual(['b', 'c']);
    expect(await Promise.all(failed)).toEqual([expect.objectContaining({ id: 'a', reason: 'admission_refused' })]);
  });

  it('ends before the others try when the first session cannot reach the server', async () => {
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((id) => fakeSession(id, log));
    const opening = openFirstThenAll([a.session, b.session], 4, () => false);
    await tick();
    a.fail(new TransportError('connect_failed', 'connect ECONNREFUSED 127.0.0.1:9'));
    const { opened, unreachable } = await opening;
    expect({ opened, unreachable, log }).toEqual({ opened: [], unreachable: 'connect ECONNREFUSED 127.0.0.1:9', log: ['a open'] });
  });
});

describe('runPackets', () => {
  it('streams any WAV given as --audio at the input rate, cut to the duration, and says what was done to it', async () => {
    // q1.wav is espeak-ng's 22,050 Hz mono: resampled to 16 kHz on load, its 2.4 s cut to 2 s.
    const file = join(speechDir(), 'q1.wav');
    const { packets, audio } = await runPackets({ audio: file, duration_s: 2, packet_ms: 80, sample_rate: 16000 });
    expect(packets.packet_count).toBe(25);
    expect(packets.packetBytes(0)).toBe(2560);
    expect(audio).toEqual({ file, conversion: expect.objectContaining({ file_rate: 22050, resampled: true, mixed: false, bits_per_sample: 16 }) });
  });

  it('streams silence without --audio, and records no input file', async () => {
    const { packets, audio } = await runPackets({ duration_s: 1, packet_ms: 80, sample_rate: 24000 });
    expect(packets.packet_count).toBe(13);
    expect(audio).toBeNull();
  });
});
