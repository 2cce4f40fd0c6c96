import { conversation } from './signals.spec-helpers';
import { VoiceThread } from './voice-thread';

jest.setTimeout(30_000);

describe('VoiceThread', () => {
  it("finds a session's speech on its playout clock: chunks play from their receipt, an arrival gap is silence", async () => {
    const rate = 22050;
    const { pcm, bounds } = await conversation(rate, [300, 'q1', 600]);
    const thread = await VoiceThread.start();
    try {
      const chunk = Math.round(rate * 0.08) * 2;
      const a = thread.session('a');
      const b = thread.session('b');
      // a: every chunk arrives as it is due, from t = 10 s. b: the same, with 1 s of nothing after its first chunk.
      for (let i = 0, t = 10; i * chunk < pcm.length; i++, t += 0.08) {
        const part = pcm.subarray(i * chunk, Math.min(pcm.length, (i + 1) * chunk));
        const b64 = Buffer.from(part.toString('base64'), 'latin1');
        a.add(t, b64, rate);
        b.add(i === 0 ? t : t + 1, b64, rate);
      }
      const [sa, sb] = await Promise.all([a.end(), b.end()]);
      expect(sa).toHaveLength(1);
      expect(Math.abs(sa[0].start_s - (10 + bounds[0].start_ms / 1000))).toBeLessThan(0.1);
      expect(Math.abs(sa[0].end_s - (10 + bounds[0].end_ms / 1000))).toBeLessThan(0.1);
      // The underrun delays everything after it by the second the user heard nothing.
      expect(sb[0].start_s - sa[0].start_s).toBeCloseTo(1, 1);
      expect(sb[0].end_s - sa[0].end_s).toBeCloseTo(1, 1);
      // A session that sent nothing has no speech.
      expect(await thread.session('c').end()).toEqual([]);
    } finally {
      await thread.close();
    }
  });
});
