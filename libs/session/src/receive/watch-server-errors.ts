import { serverError, type ProtocolError } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

/** The stage that hands each server `error` event, read into a ProtocolError (code, type, fatality), to `onError`. */
export function watchServerErrors(onError: (error: ProtocolError) => void): (e: ReceivedEvent) => void {
  return (e) => {
    if (e.frame.type === 'error') onError(serverError(e.frame));
  };
}
