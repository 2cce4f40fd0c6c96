import { ModelPlayout } from './playout';

// 8 kHz PCM16: 4,000 bytes are 0.25 s, so every time below is exact in binary.
const RATE = 8000;
const QUARTER = 4000;

describe('ModelPlayout', () => {
  it('plays each chunk from its receipt, after what came before it: an early chunk waits, a late one leaves a gap', () => {
    const p = new ModelPlayout();
    expect(p.playedUntil_s).toBe(-Infinity);
    p.add(10, QUARTER, RATE, false);
    expect(p.playedUntil_s).toBe(10.25);
    // Received while the first still plays: it follows it.
    p.add(10.1, QUARTER, RATE, false);
    expect(p.playedUntil_s).toBe(10.5);
    // Received after the speaker ran dry (an underrun): it plays from its receipt, nothing skipped.
    p.add(11, QUARTER, RATE, false);
    expect(p.playedUntil_s).toBe(11.25);
  });

  it('times each chunk by its own rate, whole samples only, and ignores a chunk of no whole sample', () => {
    const p = new ModelPlayout();
    p.add(0, 1, RATE, true);
    expect(p.playedUntil_s).toBe(-Infinity);
    expect(p.spans()).toEqual([]);
    p.add(0, QUARTER, 16000, false);
    expect(p.playedUntil_s).toBe(0.125);
    // An odd byte is half a sample: it adds no time.
    p.add(0, QUARTER + 1, RATE, false);
    expect(p.playedUntil_s).toBe(0.375);
  });

  it('joins voiced chunks that play back to back into one stretch; an unvoiced chunk or a gap ends it', () => {
    const p = new ModelPlayout();
    p.add(10, QUARTER, RATE, true);
    p.add(10, QUARTER, RATE, true);
    p.add(10, QUARTER, RATE, false);
    p.add(10, QUARTER, RATE, true);
    p.add(12, QUARTER, RATE, true);
    expect(p.spans(0)).toEqual([
      { start_s: 10, end_s: 10.5 },
      { start_s: 10.75, end_s: 11 },
      { start_s: 12, end_s: 12.25 },
    ]);
  });

  it('merges stretches whose gap is under merge_ms (500 by default) into one span, and leaves its own stretches as they are', () => {
    const p = new ModelPlayout();
    p.add(10, QUARTER, RATE, true);
    p.add(10.5, QUARTER, RATE, true);
    p.add(11.25, QUARTER, RATE, true);
    // Gaps: 250 ms, then 500 ms.
    expect(p.spans()).toEqual([
      { start_s: 10, end_s: 10.75 },
      { start_s: 11.25, end_s: 11.5 },
    ]);
    expect(p.spans(250)).toHaveLength(3);
    expect(p.spans(501)).toEqual([{ start_s: 10, end_s: 11.5 }]);
    p.spans(501)[0].end_s = 99;
    expect(p.spans(0)).toEqual([
      { start_s: 10, end_s: 10.25 },
      { start_s: 10.5, end_s: 10.75 },
      { start_s: 11.25, end_s: 11.5 },
    ]);
  });

  it('counts the model speech played within a window, ms', () => {
    const p = new ModelPlayout();
    p.add(10, 2 * QUARTER, RATE, true);
    p.add(10, QUARTER, RATE, false);
    p.add(10, QUARTER, RATE, true);
    // Speech 10–10.5 and 10.75–11.
    expect(p.speechPlayedMs(0, 20)).toBe(750);
    expect(p.speechPlayedMs(10.25, 10.875)).toBe(375);
    expect(p.speechPlayedMs(10.5, 10.75)).toBe(0);
    expect(p.speechPlayedMs(11, 12)).toBe(0);
    expect(new ModelPlayout().speechPlayedMs(0, 20)).toBe(0);
  });

  it('says model speech is playing from the start of its last stretch up to, not at, its end', () => {
    const p = new ModelPlayout();
    expect(p.speakingAt(10)).toBe(false);
    p.add(10, QUARTER, RATE, true);
    expect(p.speakingAt(9.99)).toBe(false);
    expect(p.speakingAt(10)).toBe(true);
    expect(p.speakingAt(10.2)).toBe(true);
    expect(p.speakingAt(10.25)).toBe(false);
    // Unvoiced audio after it plays no speech.
    p.add(10, QUARTER, RATE, false);
    expect(p.speakingAt(10.3)).toBe(false);
  });

  it('gives the end of the last stretch once it has played by t_s, and only when it ended after from_s', () => {
    const p = new ModelPlayout();
    expect(p.lastSpeechEndBefore(0, 20)).toBeNull();
    p.add(10, QUARTER, RATE, true);
    // Still playing at 10.2.
    expect(p.lastSpeechEndBefore(9, 10.2)).toBeNull();
    expect(p.lastSpeechEndBefore(9, 10.25)).toBe(10.25);
    expect(p.lastSpeechEndBefore(9, 12)).toBe(10.25);
    // A window that opened once it was over has none.
    expect(p.lastSpeechEndBefore(10.25, 12)).toBeNull();
  });
});
