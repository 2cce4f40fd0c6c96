import { join } from 'node:path';
import { readWavAs, speechDir } from '@duplex-bench/audio';
import { answerAudio, loadAnswerAudio } from './answer-audio';
import { voicedFrames } from './energy-vad';

const RATE = 16000;
/** Samples in one 10 ms VAD frame at RATE. */
const FRAME = 160;

/** PCM16 at RATE: 10 ms frames, loud (a 440 Hz tone at −20 dBFS) where `loud` says, silent elsewhere; `samples` cuts the last one short. */
function framesOf(loud: boolean[], samples = loud.length * FRAME): Buffer {
  const n = samples;
  const out = Buffer.alloc(n * 2);
  const amp = 32768 * 0.1 * Math.SQRT2;
  for (let i = 0; i < n; i++) if (loud[Math.floor(i / FRAME)]) out.writeInt16LE(Math.round(amp * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
  return out;
}

describe('answerAudio', () => {
  it('places the onset at the first sample of the first voiced frame and the offset at the end of the last', () => {
    const a = answerAudio(framesOf([false, false, true, true, false, true, false, false]), RATE);
    expect([a.rate, a.samples]).toEqual([RATE, 8 * FRAME]);
    expect(a.onset_sample).toBe(2 * FRAME);
    expect(a.offset_sample).toBe(6 * FRAME);
  });

  it('ends the offset at the last sample when a short last frame is voiced', () => {
    const a = answerAudio(framesOf([false, true, true, true], 3 * FRAME + 40), RATE);
    // The short last frame (40 samples of the tone) is voiced by its own length: its end is the audio's.
    expect(a.samples).toBe(3 * FRAME + 40);
    expect(a.offset_sample).toBe(a.samples);
  });

  it('of silence: the onset at the end and the offset at 0, so nothing voiced ever goes out', () => {
    const a = answerAudio(Buffer.alloc(4 * FRAME * 2), RATE);
    expect([a.onset_sample, a.offset_sample]).toEqual([4 * FRAME, 0]);
    expect(a.voicedEndBefore(a.samples)).toBe(0);
  });

  it('voicedEndBefore: the end of the last voiced frame ending at or before the cut, a voiced frame the cut falls in counting up to the cut', () => {
    const a = answerAudio(framesOf([false, true, true, false, false, true, false]), RATE);
    // Before any voiced sample: nothing.
    expect(a.voicedEndBefore(FRAME)).toBe(0);
    // Inside voiced frame 1: up to the cut.
    expect(a.voicedEndBefore(FRAME + 10)).toBe(FRAME + 10);
    // Inside silent frame 3: the end of voiced frame 2.
    expect(a.voicedEndBefore(3 * FRAME + 50)).toBe(3 * FRAME);
    // On the boundary after frame 5: its end.
    expect(a.voicedEndBefore(6 * FRAME)).toBe(6 * FRAME);
    // Past the end: the last voiced frame's end.
    expect(a.voicedEndBefore(100 * FRAME)).toBe(6 * FRAME);
    expect(a.voicedEndBefore(0)).toBe(0);
  });
});

describe('loadAnswerAudio', () => {
  const wav = (rate: number) => readWavAs(join(speechDir(), 'answer.wav'), rate).then((w) => w.pcm);

  it('cuts answer.wav to answer_ms at the output rate', async () => {
    const speech = await wav(22050);
    const a = await loadAnswerAudio(22050, 500);
    expect(a.rate).toBe(22050);
    expect(a.samples).toBe(11025);
    expect(a.pcm.equals(speech.subarray(0, 11025 * 2))).toBe(true);
  });

  it('loops answer.wav to fill a longer answer_ms, whole samples rounded', async () => {
    const speech = await wav(22050);
    // Two and a half times the speech, and 0.6 of a sample: rounded up to a whole one.
    const samples = Math.floor((speech.length / 2) * 2.5);
    const a = await loadAnswerAudio(22050, ((samples + 0.6) * 1000) / 22050);
    expect(a.samples).toBe(samples + 1);
    expect(a.pcm.subarray(0, speech.length).equals(speech)).toBe(true);
    expect(a.pcm.subarray(speech.length, 2 * speech.length).equals(speech)).toBe(true);
    const rest = a.pcm.length - 2 * speech.length;
    expect(a.pcm.subarray(2 * speech.length).equals(speech.subarray(0, rest))).toBe(true);
  });

  it("states the voiced onset and offset of the answer as the input VAD's frames find them", async () => {
    const a = await loadAnswerAudio(16000, 2000);
    const { frame_samples, voiced } = voicedFrames(a.pcm, 16000);
    expect(a.onset_sample).toBe(voiced.indexOf(true) * frame_samples);
    expect(a.offset_sample).toBe((voiced.lastIndexOf(true) + 1) * frame_samples);
    // The committed speech has a voice in it, and silence before it.
    expect(a.onset_sample).toBeGreaterThan(0);
    expect(a.offset_sample).toBeGreaterThan(a.onset_sample);
  });
});
