import { addResponseEvents, type ResponseEvent } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

/**
 * The stage that hands what a received frame says of the model's responses (protocol's
 * `addResponseEvents`, every dialect's names) to `add`, once `active()` says the response figures
 * have started (the input stream's first packet went): frames before it are not read for them.
 */
export function trackResponses(active: () => boolean, add: (e: ResponseEvent) => void): (e: ReceivedEvent) => void {
  return (e) => {
    if (active()) addResponseEvents(e.frame, e.received_s, add);
  };
}
