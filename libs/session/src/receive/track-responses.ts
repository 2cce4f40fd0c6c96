import { firstVoicedMs } from '@duplex-bench/audio';
import { addResponseEvents, modelAudioOf, type ResponseEvent } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

/** What the stage asks of the session's responses to time their first audible audio. */
export interface AudibleWatch {
  /** Whether response `id` has had no voiced audio yet: only its deltas are decoded for it. */
  wants(response_id: string): boolean;
  /** The output rate a delta that states none is at. */
  output_rate(): number;
}

/**
 * The stage that hands what a received frame says of the model's responses (protocol's
 * `addResponseEvents`, every dialect's names) to `add`, once `active()` says the response figures
 * have started (the input stream's first packet went): frames before it are not read for them.
 * With `audible`, an audio delta of a response not yet heard carries where its first voiced audio
 * starts (`voiced_at_ms`): each response's deltas are decoded until one is voiced, no further.
 */
export function trackResponses(active: () => boolean, add: (e: ResponseEvent) => void, audible?: AudibleWatch): (e: ReceivedEvent) => void {
  if (!audible) {
    return (e) => {
      if (active()) addResponseEvents(e.frame, e.received_s, add);
    };
  }
  // The frame in hand, for the events it stands for: no closure made per frame.
  let frame: ReceivedEvent['frame'] | null = null;
  const addHeard = (e: ResponseEvent) => {
    if (e.kind === 'audio_delta' && frame && audible.wants(e.response_id)) {
      const audio = modelAudioOf(frame);
      e.voiced_at_ms = audio ? firstVoicedMs(audio.base64, audio.sample_rate_hz ?? audible.output_rate()) : null;
    }
    add(e);
  };
  return (e) => {
    if (!active()) return;
    frame = e.frame;
    addResponseEvents(e.frame, e.received_s, addHeard);
    frame = null;
  };
}
