import { readFileSync } from 'node:fs';
import { FVAD_PACKAGE, FVAD_VERSION, FvadDetector, VoiceActivityError } from './fvad';
import { speech } from './signals.spec-helpers';

const RATE = 16000;
/** 30 ms at 16 kHz. */
const FRAME = 480;

/** The frames of `pcm` (PCM16 LE) libfvad calls speech, of all its whole frames. */
function voicedFrames(d: FvadDetector, pcm: Buffer): { voiced: number; frames: number } {
  const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
  let voiced = 0;
  const frames = Math.floor(samples.length / d.frame_samples);
  for (let i = 0; i < frames; i++) if (d.isSpeech(samples.subarray(i * d.frame_samples, (i + 1) * d.frame_samples))) voiced++;
  return { voiced, frames };
}

const caught = async (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

describe('FvadDetector', () => {
  it('is the libfvad build of the package version pinned', () => {
    const installed = JSON.parse(readFileSync(require.resolve(`${FVAD_PACKAGE}/package.json`), 'utf8')) as { version: string };
    expect(installed.version).toBe(FVAD_VERSION);
  });

  it('calls digital silence no speech and most frames of an utterance speech', async () => {
    const d = await FvadDetector.open(RATE, 3, FRAME);
    try {
      expect(d.frame_samples).toBe(FRAME);
      expect(d.isSpeech(new Int16Array(FRAME))).toBe(false);
      const { voiced, frames } = voicedFrames(d, await speech('q1', RATE));
      expect(voiced).toBeGreaterThan(frames / 2);
      expect(voicedFrames(d, Buffer.alloc(RATE * 2)).voiced).toBe(0);
    } finally {
      d.close();
    }
  });

  it('refuses a rate or a mode libfvad does not take, with a coded error that names them', async () => {
    const rate = await caught(FvadDetector.open(44100, 0, 441));
    expect(rate).toBeInstanceOf(VoiceActivityError);
    expect(rate).toMatchObject({ name: 'VoiceActivityError', code: 'VOICE_ACTIVITY', message: 'libfvad refuses 44100 Hz or mode 0', detail: { sample_rate: 44100, mode: 0 } });
    expect(await caught(FvadDetector.open(RATE, 4, FRAME))).toMatchObject({ code: 'VOICE_ACTIVITY', detail: { sample_rate: RATE, mode: 4 } });
  });

  it('refuses a frame that is not 10, 20 or 30 ms long', async () => {
    const d = await FvadDetector.open(RATE, 0, 100);
    try {
      expect(() => d.isSpeech(new Int16Array(100))).toThrow(new VoiceActivityError('libfvad refuses a frame of 100 samples'));
    } finally {
      d.close();
    }
  });

  it('keeps reading its frames after the wasm memory grew under it', async () => {
    const d = await FvadDetector.open(RATE, 0, FRAME);
    const pcm = await speech('q1', RATE);
    const before = voicedFrames(d, pcm);
    // A detector whose frame takes 64 MiB makes the memory grow: its buffer is replaced.
    const large = await FvadDetector.open(RATE, 0, 32 * 1024 * 1024);
    try {
      expect(voicedFrames(d, pcm)).toEqual(before);
    } finally {
      large.close();
      d.close();
    }
  });

  it('may be closed more than once', async () => {
    const d = await FvadDetector.open(RATE, 0, FRAME);
    d.close();
    expect(() => d.close()).not.toThrow();
  });
});
