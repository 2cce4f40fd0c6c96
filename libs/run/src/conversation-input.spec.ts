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

  describe("a run's sessions: once without --duration, for --duration with it", () => {
    // The script: a.wav (7 packets), 300 ms of silence (4), a listen until model_done of at most 2 s, a.wav (7), b.wav (4).
    const SILENT_PASS = 7 + 4 + 25 + 7 + 4;

    /**
     * A session's player from `c`, streamed as the send path does, one 80 ms packet a tick: the model's
     * 80 ms chunk arrives (voiced when `speaks(t_s)`), inputOverAt is asked, then the packet is taken.
     */
    function stream(c: ConversationInput, speaks: (t_s: number) => boolean = () => false) {
      let now = 0;
      const player = c.player(() => now);
      let over_at: number | null = null;
      // Whether the last step had ended when each packet went.
      const lastEnded: boolean[] = [];
      for (let seq = 0; seq < player.packet_count; seq++) {
        now = seq * 0.08;
        player.playout.add(now, 2 * 1920, 24000, speaks(now));
        if (player.inputOverAt(seq)) {
          over_at = seq;
          break;
        }
        lastEnded.push(player.steps.length === 5 && player.steps[4].end_s !== null);
        player.packetBase64(seq);
      }
      return { player, over_at, lastEnded };
    }

    it('plays the script once, bounded by one pass: the input ends after its last step, not before, when the model never answers', async () => {
      const c = await ConversationInput.read(settings({ conversation_once: true, duration_s: 0 }));
      expect(c.sessionBoundS()).toBe(c.passBoundS());
      const { player, over_at, lastEnded } = stream(c);
      // The session is given the bound as its length: 49 packets.
      expect(player.packet_count).toBe(49);
      // The listen ran to its max_s (2 s, a packet more when the boundary falls a hair short of it), and the input ended where b.wav did.
      expect(player.steps.map((st) => [st.pass, st.step, st.ended_by])).toEqual([
        [0, 0, undefined],
        [0, 1, undefined],
        [0, 2, 'max_s'],
        [0, 3, undefined],
        [0, 4, undefined],
      ]);
      expect([SILENT_PASS, SILENT_PASS + 1]).toContain(over_at);
      expect(over_at as number).toBeLessThan(player.packet_count);
      expect(player.steps[4].end_s).toBeCloseTo((over_at as number) * 0.08, 9);
      // Not before: b.wav went whole, every step ended uncut, and no packet went after the last step ended.
      expect((player.steps[4].end_s as number) - player.steps[4].start_s).toBeCloseTo(4 * 0.08, 9);
      expect(player.steps.every((st) => st.end_s !== null && !st.cut)).toBe(true);
      expect(lastEnded).toHaveLength(over_at as number);
      expect(lastEnded.every((ended) => !ended)).toBe(true);
      expect(player.inputOverAt((over_at as number) + 1)).toBe(true);
    });

    it('plays the script once to where the model lets it end: an answer that ends early ends the pass early', async () => {
      const c = await ConversationInput.read(settings({ conversation_once: true, duration_s: 0 }));
      // The model speaks from 1.2 s to 1.6 s: the listen (from 0.88 s) ends 500 ms of played silence after, at the boundary 2.16 s (packet 27).
      const { player, over_at } = stream(c, (t) => t >= 1.2 - 1e-9 && t < 1.6 - 1e-9);
      expect(player.steps[2]).toMatchObject({ ended_by: 'trigger' });
      expect(player.steps[2].end_s).toBeCloseTo(2.16, 9);
      expect(over_at).toBe(27 + 7 + 4);
      expect(player.steps.every((st) => st.pass === 0 && st.end_s !== null && !st.cut)).toBe(true);
    });

    it('with --duration, as before: the script starts again until the duration ends, and the step then playing is cut', async () => {
      const c = await ConversationInput.read(settings({ duration_s: 6 }));
      expect(c.sessionBoundS()).toBe(6);
      const { player, over_at } = stream(c);
      expect(player.packet_count).toBe(75);
      expect(over_at).toBeNull();
      // Pass 0 over at packet 47 or 48; pass 1's listen (from packet 58 or 59) is cut by the end of the session at 6 s.
      expect(player.steps.map((st) => [st.pass, st.step])).toEqual([
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
        [0, 4],
        [1, 0],
        [1, 1],
        [1, 2],
      ]);
      expect(player.steps[7]).toMatchObject({ ended_by: 'session_end' });
      expect(player.steps[7].end_s).toBeCloseTo(6, 9);
      // And shorter than one pass: cut in its listen.
      const short = stream(await ConversationInput.read(settings({ duration_s: 2 })));
      expect(short.over_at).toBeNull();
      expect(short.player.steps.map((st) => [st.pass, st.step, st.ended_by])).toEqual([
        [0, 0, undefined],
        [0, 1, undefined],
        [0, 2, 'session_end'],
      ]);
    });
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
