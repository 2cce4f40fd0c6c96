import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWavPcm16, MODEL_DONE_SILENCE_MS, UTTERANCE_SAMPLE_THRESHOLD, VOICE_ACTIVITY_DEFAULTS, VOICED_DBFS, type VoiceActivitySettings } from '@duplex-bench/audio';
import { ConversationInput, modelSpeechOrigin, type ConversationSettings } from './conversation-input';

/** `n` samples of PCM16 mono, sample i worth `value(i)`. */
function pcm(n: number, value: (i: number) => number): Buffer {
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(value(i), i * 2);
  return b;
}

describe('ConversationInput', () => {
  let dir: string;
  // a.wav: 0.5 s at 16 kHz, voiced (a ramp well above the speech threshold). b.wav: 0.25 s at 8 kHz.
  const a = pcm(8000, (i) => 2000 + (i % 1000));
  const settings = (over: Partial<ConversationSettings> = {}): ConversationSettings => ({
    conversation: join(dir, 'talk.yaml'),
    packet_ms: 80,
    sample_rate: 16000,
    duration_s: 2,
    max_stop_s: 3,
    takeover_min_ms: 500,
    ...over,
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conversation-input-'));
    await writeFile(join(dir, 'a.wav'), encodeWavPcm16(a, 16000));
    await writeFile(join(dir, 'b.wav'), encodeWavPcm16(pcm(2000, () => 3000), 8000));
    const steps = [{ say: 'a.wav' }, { silence_ms: 300, expect: 'hold' }, { listen: { until: 'model_done', max_s: 2 } }, { say: 'a.wav', expect: 'stop' }, { say: 'b.wav' }];
    await writeFile(join(dir, 'talk.yaml'), JSON.stringify({ name: 'talk', steps }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads each WAV the script says once, at the input rate, and records it with what was done to it', async () => {
    const c = await ConversationInput.read(settings());
    expect(c.script.name).toBe('talk');
    expect(c.record).toMatchObject({ name: 'talk', file: join(dir, 'talk.yaml'), steps: 5, max_stop_s: 3, takeover_min_ms: 500 });
    expect(c.record.files.map((f) => [f.file, f.duration_ms])).toEqual([
      [join(dir, 'a.wav'), 500],
      [join(dir, 'b.wav'), 250],
    ]);
    expect(c.record.files[0]).toMatchObject({ file_rate: 16000, resampled: false });
    expect(c.record.files[1]).toMatchObject({ file_rate: 8000, resampled: true });
  });

  it('records the thresholds that tell speech, and the VAD settings, as they were', async () => {
    const c = await ConversationInput.read(settings());
    expect(c.record).toMatchObject({
      utterance_sample_threshold: UTTERANCE_SAMPLE_THRESHOLD,
      voiced_dbfs: VOICED_DBFS,
      model_done_silence_ms: MODEL_DONE_SILENCE_MS,
      model_speech: modelSpeechOrigin(VOICE_ACTIVITY_DEFAULTS),
      voice_activity: VOICE_ACTIVITY_DEFAULTS,
    });
    // A copy: the record cannot change the defaults.
    expect(c.record.voice_activity).not.toBe(VOICE_ACTIVITY_DEFAULTS);
  });

  it("bounds one pass: each utterance's packets, each silence, each listen to its max_s plus a packet, and a packet at the end", async () => {
    const c = await ConversationInput.read(settings());
    // a: 7 packets (6.25), silence 300 ms: 4, listen 2 s: 25 + 1, a: 7, b (4,000 samples at 16 kHz): 4, and 1.
    expect(c.passBoundS()).toBeCloseTo((7 + 4 + 26 + 7 + 4 + 1) * 0.08, 9);
    const at40 = await ConversationInput.read(settings({ packet_ms: 40 }));
    expect(at40.passBoundS()).toBeCloseTo((13 + 8 + 51 + 13 + 7 + 1) * 0.04, 9);
  });

  it("gives each session's behaviour the run's bounds, and each step's listen bound (none where the step is no listen)", async () => {
    const b = (await ConversationInput.read(settings({ max_stop_s: 1.5, takeover_min_ms: 250 }))).behaviour();
    expect(b).toMatchObject({ max_stop_s: 1.5, takeover_min_ms: 250 });
    expect([0, 1, 2, 3, 4, 5].map((i) => b.listen_max_s(i))).toEqual([Infinity, Infinity, 2, Infinity, Infinity, Infinity]);
  });

  it("gives each session a player of its own, from the script's first step, for the run's duration unless told", async () => {
    const c = await ConversationInput.read(settings());
    const one = c.player(() => 0);
    const other = c.player(() => 0, 1);
    expect(one.packet_count).toBe(25);
    expect(other.packet_count).toBe(13);
    expect(one).not.toBe(c.player(() => 0));
    // Its first packet is a.wav's first 1,280 samples.
    expect(Buffer.from(one.packetBase64(0).toString('latin1'), 'base64')).toEqual(a.subarray(0, 2560));
    expect(one.steps[0]).toMatchObject({ step: 0, kind: 'say' });
  });

  it('states what each behaviour figure is measured from, with the takeover bound and the model speech origin', async () => {
    const c = await ConversationInput.read(settings({ takeover_min_ms: 750 }));
    const o = c.origins();
    expect(Object.keys(o).sort()).toEqual(['backchannel_yield_rate', 'cancel_latency_ms', 'overlap_ms', 'pause_takeover_rate', 'response_latency_ms', 'stop_latency_ms']);
    expect(o.pause_takeover_rate).toContain('at least 750 ms');
    expect(o.response_latency_ms).toContain(c.record.model_speech);
  });
});

describe('modelSpeechOrigin', () => {
  const v: VoiceActivitySettings = { ...VOICE_ACTIVITY_DEFAULTS, engine: 'vad-x', mode: 2, frame_ms: 20, sample_rate: 8000, merge_ms: 300 };

  it('names the VAD engine, mode, frames, rate and merge gap it ran with', () => {
    const s = modelSpeechOrigin(v);
    expect(s).toContain('speech by vad-x mode 2, 20 ms frames at 8000 Hz');
    expect(s).toContain('spans closer than 300 ms merged');
    expect(s).toContain(`above ${VOICED_DBFS} dBFS`);
  });

  it('says how other rates are taken to the VAD rate, by the resampler set', () => {
    expect(modelSpeechOrigin({ ...v, resampler: 'linear' })).toContain('linear interpolation up to 24 kHz, a windowed sinc above');
    expect(modelSpeechOrigin({ ...v, resampler: 'sinc' })).toContain('(other rates taken there by a windowed sinc)');
  });
});
