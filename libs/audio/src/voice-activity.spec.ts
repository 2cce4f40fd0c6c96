import { readFileSync } from 'node:fs';
import { VoiceActivityError } from './fvad';
import { conversation, whiteNoise } from './signals.spec-helpers';
import { SpeechDetector, VOICE_ACTIVITY_DEFAULTS, speechSpans, voiceActivitySettings, type SpeechSpan } from './voice-activity';

const RATES = [16000, 22050, 24000];

/** The worst distance in ms between found spans and known bounds, one for one. */
function worstError(spans: SpeechSpan[], bounds: SpeechSpan[]): number {
  expect(spans).toHaveLength(bounds.length);
  return Math.max(...spans.flatMap((s, i) => [Math.abs(s.start_ms - bounds[i].start_ms), Math.abs(s.end_ms - bounds[i].end_ms)]));
}

describe('speech spans on received audio', () => {
  it.each(RATES)('finds each utterance within its known bounds at %d Hz', async (rate) => {
    // The files end in 333 ms of silence each, so the gaps between known bounds are 1,533 and 736 ms.
    const { pcm, bounds } = await conversation(rate, [1000, 'q1', 1200, 'stop', 400, 'mhm', 1000]);
    const spans = await speechSpans(pcm, rate);
    // DESIGN asks 100 ms; measured worst 9 ms at every rate. 25 ms catches a lost hangover correction (99 ms).
    expect(worstError(spans, bounds)).toBeLessThanOrEqual(25);
  });

  it.each(RATES)('merges utterances whose gap is under 500 ms and keeps apart those over it, at %d Hz', async (rate) => {
    // q3a ends in 332 ms of silence and q3b begins with 13 ms: the gaps are 445 ms and 745 ms.
    const near = await conversation(rate, [1000, 'q3a', 100, 'q3b', 1000]);
    const merged = await speechSpans(near.pcm, rate);
    expect(worstError(merged, [{ start_ms: near.bounds[0].start_ms, end_ms: near.bounds[1].end_ms }])).toBeLessThanOrEqual(25);
    // q3b opens on a soft "f" that libfvad calls speech 43 ms after the threshold does (measured, every rate).
    const far = await conversation(rate, [1000, 'q3a', 400, 'q3b', 1000]);
    expect(worstError(await speechSpans(far.pcm, rate), far.bounds)).toBeLessThanOrEqual(50);
  });

  it.each(RATES)('finds no speech in silence or in -60 dBFS white noise at %d Hz', async (rate) => {
    expect(await speechSpans(Buffer.alloc(rate * 2 * 5), rate)).toEqual([]);
    for (const seed of [1, 2, 3]) expect(await speechSpans(whiteNoise(-60, rate, 5, seed * 7919), rate)).toEqual([]);
  });

  it.each([22050, 24000])('finds the same spans through linear interpolation to 16 kHz as through the windowed sinc to 8 kHz, at %d Hz', async (rate) => {
    const { pcm, bounds } = await conversation(rate, [1000, 'q1', 1200, 'stop', 400, 'mhm', 1000, 'q2', 700, 'answer', 500]);
    const linear = await speechSpans(pcm, rate);
    const sinc = await speechSpans(pcm, rate, voiceActivitySettings({ sample_rate: 8000, resampler: 'sinc' }));
    // Measured: the same frames at 22,050 Hz; at 24,000 Hz one span ends a frame (10 ms) later.
    expect(worstError(linear, sinc)).toBeLessThanOrEqual(10);
    expect(worstError(linear, bounds)).toBeLessThanOrEqual(25);
  });

  it('gives the same spans fed chunk by chunk, in chunks of any size (odd bytes too), as in one piece', async () => {
    const rate = 24000;
    const { pcm } = await conversation(rate, [300, 'stop', 400, 'mhm', 500]);
    const d = await SpeechDetector.open(rate);
    for (let at = 0, size = 1; at < pcm.length; at += size, size = ((size * 13) % 4801) + 1) d.push(pcm.subarray(at, at + size));
    expect(d.end()).toEqual(await speechSpans(pcm, rate));
  });

  it('drops spans shorter than min_span_ms: the blip libfvad calls at the onset of noise', async () => {
    const noise = whiteNoise(-50, 16000, 2);
    expect(await speechSpans(noise, 16000, voiceActivitySettings({ min_span_ms: 0 }))).toEqual([{ start_ms: 0, end_ms: 10 }]);
    expect(await speechSpans(noise, 16000)).toEqual([]);
  });
});

describe('voice activity settings', () => {
  it('records the engine, its installed version and the defaults for run.json', () => {
    const installed = JSON.parse(readFileSync(require.resolve('@echogarden/fvad-wasm/package.json'), 'utf8')) as { version: string };
    expect(VOICE_ACTIVITY_DEFAULTS).toEqual({
      engine: '@echogarden/fvad-wasm',
      engine_version: installed.version,
      mode: 3,
      frame_ms: 10,
      sample_rate: 16000,
      resampler: 'linear',
      hangover_ms: 90,
      merge_ms: 500,
      min_span_ms: 50,
    });
  });

  it('takes libfvad’s hangover for the mode and frame length unless told', () => {
    expect(voiceActivitySettings({ mode: 0 }).hangover_ms).toBe(140);
    expect(voiceActivitySettings({ mode: 2, frame_ms: 30 }).hangover_ms).toBe(90);
    expect(voiceActivitySettings({ frame_ms: 20 }).hangover_ms).toBe(100);
    expect(voiceActivitySettings({ hangover_ms: 0 }).hangover_ms).toBe(0);
  });

  it('refuses settings libfvad does not take, with a coded error', async () => {
    const bad = [{ mode: 4 }, { frame_ms: 15 }, { sample_rate: 22050 }, { resampler: 'cubic' }, { merge_ms: -1 }] as Array<Partial<typeof VOICE_ACTIVITY_DEFAULTS>>;
    for (const changes of bad) {
      const err = await SpeechDetector.open(16000, voiceActivitySettings(changes)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VoiceActivityError);
      expect(err).toMatchObject({ name: 'VoiceActivityError', code: 'VOICE_ACTIVITY' });
    }
    await expect(speechSpans(Buffer.alloc(4), 0)).rejects.toThrow('input rate 0 Hz is not a positive whole number');
  });
});
