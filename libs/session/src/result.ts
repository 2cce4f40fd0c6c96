import type { SessionResult } from '@duplex-bench/results';

export type { SessionResult } from '@duplex-bench/results';

/** A session's result before anything happened: not complete, nothing sent. */
export function emptyResult(id: string): SessionResult {
  return { id, completed: false, violation: false, packets_sent: 0, late: 0, server_errors: 0 };
}
