import type { ModelPlayout, VoiceSession } from '@duplex-bench/audio';
import { modelAudioOf } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

/**
 * The stage that plays the model's audio into a conversation's playout as it arrives (its live
 * triggers), and hands the same PCM to the voice activity thread (its final figures), at the rate a
 * delta states, else the session's output rate. Only a conversation has it: it decodes payloads.
 */
export function hearModel(playout: ModelPlayout, voice: VoiceSession | null, output_rate: () => number): (e: ReceivedEvent) => void {
  return (e) => {
    const audio = modelAudioOf(e.frame);
    if (!audio) return;
    const rate = audio.sample_rate_hz ?? output_rate();
    playout.add(e.received_s, audio.pcm, rate);
    voice?.add(e.received_s, audio.pcm, rate);
  };
}
