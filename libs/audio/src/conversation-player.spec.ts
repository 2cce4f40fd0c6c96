import type { ConversationScript } from './conversation-script';
import { ConversationPlayer, utteranceOf, type Utterance } from './conversation-player';
import { pcm16Dbfs } from './level';
import { ModelPlayout } from './playout';

const RATE = 16000;
const PACKET_MS = 80;
const PACKET_SAMPLES = (RATE * PACKET_MS) / 1000;

/** `lead_ms` of silence, then a tone of `tone_ms`, then `tail_ms` of silence. */
function speech(lead_ms: number, tone_ms: number, tail_ms: number): Buffer {
  const n = ((lead_ms + tone_ms + tail_ms) * RATE) / 1000;
  const pcm = Buffer.alloc(n * 2);
  for (let i = (lead_ms * RATE) / 1000; i < ((lead_ms + tone_ms) * RATE) / 1000; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / RATE)), i * 2);
  return pcm;
}

const voiced = (ms: number) => speech(0, ms, 0);

describe('ConversationPlayer', () => {
  const utterances = new Map<string, Utterance>([
    ['/q.wav', utteranceOf('/q.wav', speech(100, 500, 60), PACKET_SAMPLES)],
    ['/stop.wav', utteranceOf('/stop.wav', speech(0, 300, 0), PACKET_SAMPLES)],
  ]);
  const script: ConversationScript = {
    name: 't',
    file: '/t.yaml',
    steps: [
      { kind: 'say', file: '/q.wav' },
      { kind: 'listen', until: 'model_speech', ms: 400, max_s: 15 },
      { kind: 'say', file: '/stop.wav', expect: 'stop' },
      { kind: 'listen', until: 'model_done', max_s: 15 },
      { kind: 'silence', ms: 400, expect: 'hold' },
    ],
  };

  /** Plays `seconds` of packets; the model's audio arrives in 80 ms chunks, voiced in [speak_from, speak_to). */
  function play(seconds: number, speak_from: number, speak_to: number) {
    let now = 0;
    const playout = new ModelPlayout();
    const player = new ConversationPlayer(script, utterances, PACKET_MS, RATE, seconds, playout, () => now);
    const sent: Buffer[] = [];
    for (let seq = 0; seq < player.packet_count; seq++) {
      now = seq * 0.08;
      // The model's chunk for this 80 ms arrives at the boundary, before the packet goes.
      playout.add(now, voiced(80).length, RATE, now >= speak_from - 1e-9 && now < speak_to - 1e-9);
      sent.push(Buffer.from(player.packetBase64(seq).toString('latin1'), 'base64'));
    }
    return { player, sent };
  }

  it('switches at packet boundaries on what the model does, and times the speech in each utterance to the sample', () => {
    const { player, sent } = play(6, 1.2, 3.0);
    const [say, listen, stop, done, pause] = player.steps;
    // The utterance: 9 packets (660 ms, the last padded), speech from 100 ms to 600 ms.
    expect(say).toMatchObject({ kind: 'say', start_s: 0, end_s: 0.72 });
    expect(say.speech_start_s).toBeCloseTo(0.1, 3); // the tone's first sample at speech level
    expect(say.speech_end_s).toBeCloseTo(0.6, 3);
    // 400 ms of model speech have played at 1.6 s (it started at 1.2 s): the listen ends at that boundary.
    expect(listen).toMatchObject({ kind: 'listen', ended_by: 'trigger' });
    expect(listen.end_s).toBeCloseTo(1.6, 9);
    expect(stop).toMatchObject({ kind: 'say', expect: 'stop' });
    expect(stop.start_s).toBeCloseTo(1.6, 9);
    // The model's last voiced chunk (received at 2.96 s) played until 3.04 s; 500 ms of played silence followed at 3.54 s: the next boundary, 3.6.
    expect(done).toMatchObject({ kind: 'listen', ended_by: 'trigger' });
    expect(done.end_s).toBeCloseTo(3.6, 9);
    expect(pause).toMatchObject({ kind: 'silence', expect: 'hold', end_s: expect.any(Number) });
    expect((pause.end_s as number) - pause.start_s).toBeCloseTo(0.4, 9);
    // The script starts again, pass 1, and the session's end cuts a step.
    expect(player.steps[5]).toMatchObject({ pass: 1, step: 0 });
    expect(player.steps.at(-1)?.end_s).toBeCloseTo(6, 9);
    // Every packet is a whole 80 ms; speech only where an utterance plays.
    expect(sent.every((p) => p.length === PACKET_SAMPLES * 2)).toBe(true);
    expect(pcm16Dbfs(sent[1])).toBeGreaterThan(-20);
    expect(pcm16Dbfs(sent[12])).toBe(-Infinity);
  });

  it('ends a listen at its bound when the model never speaks, and says so', () => {
    const short: ConversationScript = { ...script, steps: [{ kind: 'say', file: '/stop.wav' }, { kind: 'listen', until: 'model_done', max_s: 1 }] };
    let now = 0;
    const player = new ConversationPlayer(short, utterances, PACKET_MS, RATE, 3, new ModelPlayout(), () => now);
    for (let seq = 0; seq < player.packet_count; seq++) {
      now = seq * 0.08;
      player.packetBase64(seq);
    }
    expect(player.steps[1]).toMatchObject({ kind: 'listen', ended_by: 'max_s' });
    expect((player.steps[1].end_s as number) - player.steps[1].start_s).toBeCloseTo(1.04, 9);
  });

  it("ends model_done on the dialect's word that the response ended, once the model spoke", () => {
    const short: ConversationScript = { ...script, steps: [{ kind: 'say', file: '/stop.wav' }, { kind: 'listen', until: 'model_done', max_s: 10 }] };
    let now = 0;
    const playout = new ModelPlayout();
    const player = new ConversationPlayer(short, utterances, PACKET_MS, RATE, 4, playout, () => now);
    for (let seq = 0; seq < player.packet_count; seq++) {
      now = seq * 0.08;
      if (seq === 10) playout.add(now, voiced(160).length, RATE, true); // two packets of speech, then nothing more is received
      if (seq === 9) player.responseStarted(now);
      if (seq === 14) player.responseEnded(now, 'completed');
      player.packetBase64(seq);
    }
    expect(player.steps[1].end_s).toBeCloseTo(14 * 0.08, 9);
    expect(player.responseEnds).toEqual([{ t_s: 14 * 0.08, status: 'completed' }]);
    expect(player.responseStarts).toEqual([{ t_s: 9 * 0.08 }]);
  });

  it('played once, ends the input at the packet boundary where its last step ends, and never starts a second pass', () => {
    let now = 0;
    const playout = new ModelPlayout();
    // A bound of 30 s; the model speaks from 1.2 s to 3.0 s, as in the first case.
    const player = new ConversationPlayer(script, utterances, PACKET_MS, RATE, 30, playout, () => now, { once: true });
    let sent = 0;
    for (let seq = 0; seq < player.packet_count; seq++) {
      now = seq * 0.08;
      playout.add(now, voiced(80).length, RATE, now >= 1.2 - 1e-9 && now < 3.0 - 1e-9);
      if (player.inputOverAt(seq)) break;
      player.packetBase64(seq);
      sent++;
    }
    // The pause after the model's answer (3.6 s) is 400 ms: the input is over at 4.0 s, packet 50.
    expect(sent).toBe(50);
    expect(player.inputOverAt(50)).toBe(true);
    expect(player.inputOverAt(51)).toBe(true);
    expect(player.steps.map((s) => s.pass)).toEqual([0, 0, 0, 0, 0]);
    const pause = player.steps[4];
    expect(pause.end_s).toBeCloseTo(4.0, 9);
    expect(pause.cut).toBeUndefined();
    // The end of the session after it leaves the steps as they ended.
    player.endSession(4.0);
    expect(player.steps.every((s) => s.end_s !== null && s.cut === undefined && s.ended_by !== 'session_end')).toBe(true);
  });

  it('played again and again unless told once: inputOverAt is never true', () => {
    let now = 0;
    const playout = new ModelPlayout();
    const player = new ConversationPlayer(script, utterances, PACKET_MS, RATE, 12, playout, () => now);
    for (let seq = 0; seq < player.packet_count; seq++) {
      now = seq * 0.08;
      playout.add(now, voiced(80).length, RATE, now >= 1.2 - 1e-9 && now < 3.0 - 1e-9);
      expect(player.inputOverAt(seq)).toBe(false);
      player.packetBase64(seq);
    }
    expect(player.steps.some((s) => s.pass === 1)).toBe(true);
  });
});

describe('ModelPlayout', () => {
  it('plays each chunk after the one before, counts an arrival gap as silence, and merges spans closer than 500 ms', () => {
    const p = new ModelPlayout();
    p.add(1, voiced(200).length, RATE, true); // plays 1.0-1.2
    p.add(1.1, voiced(200).length, RATE, true); // queued: plays 1.2-1.4
    p.add(1.7, voiced(100).length, RATE, true); // after an underrun: 1.7-1.8
    p.add(3, voiced(100).length, RATE, true); // 3.0-3.1
    expect(p.playedUntil_s).toBeCloseTo(3.1, 9);
    expect(p.speechPlayedMs(1.1, 1.75)).toBeCloseTo(350, 6);
    expect(p.spans().map((s) => [s.start_s, s.end_s].map((x) => Math.round(x * 1000)))).toEqual([
      [1000, 1800],
      [3000, 3100],
    ]);
    expect(p.speakingAt(3.05)).toBe(true);
    expect(p.speakingAt(3.2)).toBe(false);
  });
});
