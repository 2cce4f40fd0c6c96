import { isZeroBase64 } from './level';
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

  it('skips long digital silence but keeps every span where it played: after the silence, and across a short underrun', async () => {
    const rate = 24000;
    const { pcm, bounds } = await conversation(rate, [200, 'q1', 2500, 'stop', 300, 'mhm', 400]);
    const thread = await VoiceThread.start();
    try {
      const chunk = Math.round(rate * 0.08) * 2;
      const s = thread.session('s');
      // The same audio, its chunks of digital silence sent as their length only, as the loop sends them.
      const z = thread.session('z');
      let late = 0;
      let silent = 0;
      for (let i = 0; i * chunk < pcm.length; i++) {
        // A 300 ms underrun just after stop.wav ends: mhm.wav plays 300 ms later than it would.
        if (i * chunk >= (bounds[1].end_ms / 1000 + 0.1) * rate * 2 && late === 0) late = 0.3;
        const part = pcm.subarray(i * chunk, Math.min(pcm.length, (i + 1) * chunk));
        const b64 = Buffer.from(part.toString('base64'), 'latin1');
        s.add(20 + i * 0.08 + late, b64, rate);
        if (isZeroBase64(b64)) {
          z.silence(20 + i * 0.08 + late, part.length, rate);
          silent++;
        } else z.add(20 + i * 0.08 + late, b64, rate);
      }
      const spans = await s.end();
      expect(silent).toBeGreaterThan(30);
      expect(await z.end()).toEqual(spans);
      // Each utterance its own span (the gaps between them pass 500 ms); mhm.wav 300 ms later for the underrun.
      const heard = [bounds[0], bounds[1], { start_ms: bounds[2].start_ms + 300, end_ms: bounds[2].end_ms + 300 }];
      expect(spans).toHaveLength(3);
      spans.forEach((span, i) => {
        expect(Math.abs(span.start_s - (20 + heard[i].start_ms / 1000))).toBeLessThan(0.1);
        expect(Math.abs(span.end_s - (20 + heard[i].end_ms / 1000))).toBeLessThan(0.1);
      });
    } finally {
      await thread.close();
    }
  });
});
