import { ConversationPlayer, ModelPlayout, utteranceOf, type ConversationScript, type PlayedSpan, type Utterance, type VoiceSession } from '@duplex-bench/audio';
import type { BehaviourOptions } from '@duplex-bench/metrics';
import { readTurns } from './read-turns';
import { emptyResult, type SessionResult } from './result';
import { openaiServer } from './openai-server.spec-helpers';
import { virtualSession, OPENAI, type VirtualRun } from './session.spec-helpers';

const RATE = 16_000;
const PACKET_MS = 80;
const PACKET_S = PACKET_MS / 1000;
const PACKET_SAMPLES = (RATE * PACKET_MS) / 1000;

/** `lead_ms` of silence, a tone of `tone_ms` (at speech level from its first sample to its last), then `tail_ms` of silence: PCM16 at 16 kHz. */
function speech(lead_ms: number, tone_ms: number, tail_ms: number): Buffer {
  const pcm = Buffer.alloc(((lead_ms + tone_ms + tail_ms) * RATE * 2) / 1000);
  for (let i = (lead_ms * RATE) / 1000; i < ((lead_ms + tone_ms) * RATE) / 1000; i++) pcm.writeInt16LE(Math.round(8000 * Math.cos((2 * Math.PI * 220 * i) / RATE)), i * 2);
  return pcm;
}

const utterances = new Map<string, Utterance>([
  // 660 ms: 9 packets (0.72 s), its speech from 100 ms to 600 ms.
  ['/q.wav', utteranceOf('/q.wav', speech(100, 500, 60), PACKET_SAMPLES)],
  // 300 ms of speech from its first sample: 4 packets.
  ['/stop.wav', utteranceOf('/stop.wav', speech(0, 300, 0), PACKET_SAMPLES)],
]);

const script = (...steps: ConversationScript['steps']): ConversationScript => ({ name: 't', file: '/t.yaml', steps });

/** A question, a listen for 400 ms of model speech, and a pause the model should leave alone. */
const ASK = script({ kind: 'say', file: '/q.wav' }, { kind: 'listen', until: 'model_speech', ms: 400, max_s: 15 }, { kind: 'silence', ms: 400, expect: 'hold' });

/**
 * Plays `packets` packets of `s` from `origin_s` (a session of `duration_s`), as a session's ticks
 * would: before each packet goes, the model's 80 ms chunk for it arrives, voiced (by the live
 * estimate) where `voiced(t - origin_s)` says so.
 */
function played(s: ConversationScript, o: { duration_s: number; packets?: number; origin_s?: number; voiced?: (t_s: number) => boolean }): ConversationPlayer {
  const origin_s = o.origin_s ?? 0;
  let now = origin_s;
  const playout = new ModelPlayout();
  const player = new ConversationPlayer(s, utterances, PACKET_MS, RATE, o.duration_s, playout, () => now);
  const packets = o.packets ?? player.packet_count;
  for (let seq = 0; seq < packets; seq++) {
    now = origin_s + seq * PACKET_S;
    playout.add(now, PACKET_SAMPLES * 2, RATE, o.voiced?.(seq * PACKET_S) ?? false);
    player.packetBase64(seq);
  }
  return player;
}

/** A voice activity session that answers `end` as told, and counts the calls. */
function voiceSaying(end: () => Promise<PlayedSpan[]>): VoiceSession & { ends: number } {
  const voice = {
    ends: 0,
    add: () => undefined,
    silence: () => undefined,
    end: () => {
      voice.ends++;
      return end();
    },
  };
  return voice;
}

/** The model speaks (by the live estimate) from 1.2 s to 2.0 s of the session. */
const modelFrom1200 = (t_s: number) => t_s >= 1.2 - 1e-9 && t_s < 2.0 - 1e-9;

describe('readTurns: a conversation read once its session is over', () => {
  it("reads the model's speech from the VAD's spans when the voice thread gives them, in ms from the session's first packet", async () => {
    const origin_s = 10;
    // The whole of ASK, 25 packets: say 0-0.72 s, listen to 1.6 s (400 ms of the model by then), pause 1.6-2.0 s.
    const player = played(ASK, { duration_s: 2, origin_s, voiced: modelFrom1200 });
    // The VAD heard a blip in the question (50 ms) and the answer from 1.3 s to 1.9 s.
    const voice = voiceSaying(() =>
      Promise.resolve([
        { start_s: origin_s + 0.5, end_s: origin_s + 0.55 },
        { start_s: origin_s + 1.3, end_s: origin_s + 1.9 },
      ]),
    );
    const result = emptyResult('s0');
    await readTurns(result, player, { id: 's0', origin_s, end_s: origin_s + 2, voice });
    expect(voice.ends).toBe(1);
    expect(result.turns).toEqual([
      // The question's speech ends at 600 ms; the VAD's answer starts at 1300 ms (the live estimate's at 1200).
      { session: 's0', pass: 0, step: 0, kind: 'response', outcome: 'answered', user_start_ms: 100, user_end_ms: 600, model_start_ms: 1300, model_end_ms: 1900, latency_ms: 700 },
      { session: 's0', pass: 0, step: 2, kind: 'pause', outcome: 'held', user_start_ms: 1600, user_end_ms: 2000 },
    ]);
    // Only the blip overlaps the user's speech.
    expect(result.overlap_ms).toBe(50);
    expect(result.speech).toMatchObject({ session: 's0', model_speech: 'vad', model: [[500, 550], [1300, 1900]] });
    expect(result.conversation).toEqual({ passes: 1, steps: 3, speech_spans: 'vad' });
    expect(result.message).toBeUndefined();
  });

  it("without a voice thread, reads the live estimate's spans and says so", async () => {
    const player = played(ASK, { duration_s: 2, voiced: modelFrom1200 });
    const result = emptyResult('s1');
    await readTurns(result, player, { id: 's1', origin_s: 0, end_s: 2, voice: null });
    // The live estimate: the model's chunks played from 1.2 s to 2.0 s, one span.
    expect(result.turns?.[0]).toMatchObject({ kind: 'response', outcome: 'answered', model_start_ms: 1200, model_end_ms: 2000, latency_ms: 600 });
    expect(result.speech).toMatchObject({ model_speech: 'energy', model: [[1200, 2000]] });
    expect(result.conversation).toEqual({ passes: 1, steps: 3, speech_spans: 'energy' });
    expect(result.message).toBeUndefined();
  });

  it("falls back to the live estimate when the VAD failed, and adds why to the result's message", async () => {
    const failing = () => voiceSaying(() => Promise.reject(new Error('voice activity thread exited with code 1')));
    const alone = emptyResult('s2');
    await readTurns(alone, played(ASK, { duration_s: 2, voiced: modelFrom1200 }), { id: 's2', origin_s: 0, end_s: 2, voice: failing() });
    expect(alone.message).toBe('voice activity thread exited with code 1: figures from the live energy estimate');
    expect(alone.turns?.[0]).toMatchObject({ model_start_ms: 1200, latency_ms: 600 });
    expect(alone.conversation?.speech_spans).toBe('energy');
    expect(alone.speech?.model_speech).toBe('energy');
    // A message already there is kept, the failure after it.
    const stopped: SessionResult = { ...emptyResult('s3'), message: 'stopped after 25 of 30 packets' };
    await readTurns(stopped, played(ASK, { duration_s: 2, voiced: modelFrom1200 }), { id: 's3', origin_s: 0, end_s: 2, voice: failing() });
    expect(stopped.message).toBe('stopped after 25 of 30 packets; voice activity thread exited with code 1: figures from the live energy estimate');
  });

  it('ends the step the session stopped in at end_s, cut; a cut step gives no turn, and a second pass counts', async () => {
    // ASK over 3 s, stopped after 30 packets (2.4 s): the second pass's question went 5 of its 9 packets.
    const player = played(ASK, { duration_s: 3, packets: 30, voiced: modelFrom1200 });
    expect(player.steps.at(-1)).toMatchObject({ pass: 1, step: 0, end_s: null });
    const result = emptyResult('s4');
    await readTurns(result, player, { id: 's4', origin_s: 0, end_s: 2.4, voice: null });
    expect(player.steps.at(-1)).toMatchObject({ pass: 1, step: 0, end_s: 2.4, cut: true });
    expect(result.speech?.steps.at(-1)).toMatchObject({ pass: 1, step: 0, start_ms: 2000, end_ms: 2400, cut: true });
    expect(result.turns?.map((t) => [t.pass, t.step, t.kind])).toEqual([
      [0, 0, 'response'],
      [0, 2, 'pause'],
    ]);
    expect(result.conversation).toEqual({ passes: 2, steps: 4, speech_spans: 'energy' });
  });

  describe("the behaviour bounds: the run's when given, else 15 s to answer, 500 ms to take over a pause, 3 s to stop", () => {
    /** The turns of one played script whose model speech the VAD found at `spans` (seconds of the session). */
    async function turnsOf(s: ConversationScript, duration_s: number, spans: PlayedSpan[], behaviour?: BehaviourOptions) {
      const result = emptyResult('s');
      await readTurns(result, played(s, { duration_s }), { id: 's', origin_s: 0, end_s: duration_s, voice: voiceSaying(() => Promise.resolve(spans)), behaviour });
      return result.turns ?? [];
    }
    const within = (o: Partial<BehaviourOptions>): BehaviourOptions => ({ max_stop_s: 3, takeover_min_ms: 500, listen_max_s: () => 15, ...o });

    it('an answer starting 14.99 s after the question is answered, 15.01 s after it is not; a longer listen bound answers it', async () => {
      // The listen ends at its own 20 s bound (the live estimate hears nothing); the question's speech ends at 0.6 s.
      const LONG = script({ kind: 'say', file: '/q.wav' }, { kind: 'listen', until: 'model_done', max_s: 20 });
      const answer = (after_s: number) => [{ start_s: 0.6 + after_s, end_s: 0.6 + after_s + 0.5 }];
      const first = async (after_s: number, behaviour?: BehaviourOptions) => (await turnsOf(LONG, 22, answer(after_s), behaviour))[0];
      expect(await first(14.99)).toMatchObject({ kind: 'response', outcome: 'answered', latency_ms: 14_990 });
      expect(await first(15.01)).toMatchObject({ kind: 'response', outcome: 'no_response' });
      expect(await first(15.01, within({ listen_max_s: () => 16 }))).toMatchObject({ kind: 'response', outcome: 'answered', latency_ms: 15_010 });
    });

    it('model speech of 499 ms in a pause holds it, of 501 ms takes it over; a lower bound takes it over at 499 ms', async () => {
      // One pause of 1 s (13 packets, 1.04 s), whole.
      const PAUSE = script({ kind: 'silence', ms: 1000, expect: 'hold' });
      const speaking = (ms: number) => [{ start_s: 0.2, end_s: 0.2 + ms / 1000 }];
      expect(await turnsOf(PAUSE, 1.04, speaking(499))).toEqual([expect.objectContaining({ kind: 'pause', outcome: 'held' })]);
      expect(await turnsOf(PAUSE, 1.04, speaking(501))).toEqual([expect.objectContaining({ kind: 'pause', outcome: 'took_over', model_start_ms: 200, model_end_ms: 701 })]);
      expect(await turnsOf(PAUSE, 1.04, speaking(499), within({ takeover_min_ms: 400 }))).toEqual([expect.objectContaining({ kind: 'pause', outcome: 'took_over' })]);
    });

    it('model speech that ends 2.99 s after a barge-in stopped, 3.01 s after it did not; a longer bound counts it stopped', async () => {
      // A barge-in at 0 s (its speech from the first sample), then 4 s of silence: the input runs to 5 s.
      const BARGE = script({ kind: 'say', file: '/stop.wav', expect: 'stop' }, { kind: 'silence', ms: 4000 });
      const playing = (end_s: number) => [{ start_s: -0.5, end_s }];
      const stop = async (end_s: number, behaviour?: BehaviourOptions) => (await turnsOf(BARGE, 5, playing(end_s), behaviour)).find((t) => t.kind === 'stop' && t.pass === 0);
      expect(await stop(2.99)).toMatchObject({ outcome: 'stopped', latency_ms: 2990 });
      expect(await stop(3.01)).toMatchObject({ outcome: 'no_stop' });
      expect(await stop(3.01, within({ max_stop_s: 4 }))).toMatchObject({ outcome: 'stopped', latency_ms: 3010 });
    });
  });

  describe('in a session driven in virtual time', () => {
    it("reads the session's turns at its end, from the first packet's send, with the VAD given the model's audio", async () => {
      let v: VirtualRun | null = null;
      const now_s = () => (v as VirtualRun).time.now_s();
      // ASK over 2 s as a session's input. The server's audio is digital silence: the listen hears no model speech and runs to the input's end.
      const player = new ConversationPlayer(ASK, utterances, PACKET_MS, RATE, 2, new ModelPlayout(), now_s);
      const heard: number[] = [];
      // The send start of packet 0, from the trace.
      const origin = () => (v as VirtualRun).sink.sentLines.find((l) => l.event.type === 'input_audio_buffer.append')?.time_s as number;
      const voice = {
        add: (t_s: number) => void heard.push(t_s),
        silence: (t_s: number) => void heard.push(t_s),
        // The VAD's answer: from 1.0 s to 1.5 s of the session.
        end: () => Promise.resolve([{ start_s: origin() + 1, end_s: origin() + 1.5 }]),
      };
      v = virtualSession({ dialect: OPENAI, packets: player, accept: (side) => openaiServer(side), ctx: { voice: () => voice } });
      const result = await v.result(500);
      expect(result.completed).toBe(true);
      expect(origin()).toBeCloseTo(0.5, 3);
      // The server answered each of the 5 commits with audio, all handed to the VAD.
      expect(heard).toHaveLength(5);
      expect(result.turns?.[0]).toEqual({ session: 's0', pass: 0, step: 0, kind: 'response', outcome: 'answered', user_start_ms: 100, user_end_ms: 600, model_start_ms: 1000, model_end_ms: 1500, latency_ms: 400 });
      // Each response's start and end, as the dialect said them, on the session's timeline.
      expect(result.speech?.events.map((e) => e.event)).toEqual(['created', 'done', 'created', 'done', 'created', 'done', 'created', 'done', 'created', 'done']);
      expect(result.speech?.steps[1]).toMatchObject({ kind: 'listen', ended_by: 'session_end', end_ms: 2000 });
      expect(result.conversation).toEqual({ passes: 1, steps: 2, speech_spans: 'vad' });
    });
  });
});
