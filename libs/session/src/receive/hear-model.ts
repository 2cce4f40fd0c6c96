import { base64Dbfs, isZeroBase64, VOICED_DBFS, type ModelPlayout, type VoiceSession } from '@duplex-bench/audio';
import { base64ByteLength, modelAudioOf } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

/**
 * The stage that plays the model's audio into a conversation's playout as it arrives (its live
 * triggers, voiced by a sampled level of the payload), and hands the payload, still base64, to the
 * voice activity thread (its final figures, decoded there; digital silence as its length only), at
 * the rate a delta states, else the session's output rate. Only a conversation has it.
 */
export function hearModel(playout: ModelPlayout, voice: VoiceSession | null, output_rate: () => number): (e: ReceivedEvent) => void {
  return (e) => {
    const audio = modelAudioOf(e.frame);
    if (!audio) return;
    const rate = audio.sample_rate_hz ?? output_rate();
    const bytes = base64ByteLength(audio.base64);
    // Digital silence (a native model's between answers) is told by a compare of the text: not read for a level, and sent as its length.
    if (isZeroBase64(audio.base64)) {
      playout.add(e.received_s, bytes, rate, false);
      voice?.silence(e.received_s, bytes, rate);
      return;
    }
    playout.add(e.received_s, bytes, rate, base64Dbfs(audio.base64) >= VOICED_DBFS);
    voice?.add(e.received_s, audio.base64, rate);
  };
}
