import { Subject } from 'rxjs';
import type { ProtocolError } from '@duplex-bench/protocol';
import type { SessionResult } from './result';

/**
 * A session's server `error` events folded as they come: their count by code, the last one (a
 * server that closes after it ended the session for it), and the first the dialect stops on
 * (`stopped$` says when).
 */
export class ServerErrors {
  count = 0;
  readonly codes: Record<string, number> = {};
  last: ProtocolError | null = null;
  stoppedBy: ProtocolError | null = null;
  readonly stopped$ = new Subject<void>();

  /** One error event; `stops` is the dialect's word on whether it ends the session. */
  add(error: ProtocolError, stops: boolean): void {
    this.count++;
    const code = error.info.server_code ?? error.info.server_type ?? 'unknown';
    this.codes[code] = (this.codes[code] ?? 0) + 1;
    this.last = error;
    if (!this.stoppedBy && stops) {
      this.stoppedBy = error;
      this.stopped$.next();
    }
  }

  /** A refused attempt's errors are not the session's. */
  forget(): void {
    this.count = 0;
    for (const code of Object.keys(this.codes)) delete this.codes[code];
    this.last = null;
  }

  /** Into the result: the count, the codes, and the error that ended the session when one did. */
  fold(result: SessionResult): void {
    result.server_errors = this.count;
    if (this.count > 0) result.server_error_codes = this.codes;
    const ended = this.stoppedBy ?? (result.reason === 'server_error' ? this.last : null);
    if (ended) result.server_error = { code: ended.info.server_code ?? ended.info.server_type, fatal: ended.info.fatal === true, message: ended.message };
    else if (result.reason === 'client_protocol_error' && this.last) {
      const e = this.last;
      result.server_error = { code: e.info.server_code ?? e.info.server_type, fatal: false, message: e.message };
    }
  }
}
