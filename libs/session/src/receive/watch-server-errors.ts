import { tap, type MonoTypeOperatorFunction } from 'rxjs';
import { serverError, type ProtocolError } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';

/** Hands each server `error` event, read into a ProtocolError (code, type, fatality), to `onError`. */
export function watchServerErrors(onError: (error: ProtocolError) => void): MonoTypeOperatorFunction<ReceivedEvent> {
  return tap((e) => {
    if (e.frame.type === 'error') onError(serverError(e.frame));
  });
}
