/** A fault a test server injects on every session once it has taken `after_appends` appends. */
export interface MockFault {
  /** 0: at once, right after `session.updated` (native) — before any append is answered. */
  after_appends: number;
  /**
   * - `close`: the server closes the socket (close code 1011).
   * - `drop`: the server drops the TCP connection without a close frame.
   * - `malformed_frame`: one frame that is not JSON, then nothing more for that append.
   * - `non_finite`: the append's receipt carries a number JSON cannot hold (`1e999`).
   * - `fatal_error`: an error event with `sglang.fatal: true`; the server then closes the session.
   * - `refuse_appends` (native): every append from then on is answered with a non-fatal error and
   *   not accepted.
   * - `stop_answering`: the server sends nothing more, timers and queued output included.
   * - `linger` (native): after `session.closed` the server neither closes the socket nor reads from it.
   * - `close_in_handshake` (native): the server closes the socket when `session.update` arrives.
   * - `padded_tail`, `drained_first` (native, append-echo): a server that breaks the contract but
   *   ends the session: the last unit reports a whole unit and drained counts the padding as
   *   consumed; or drained comes before the response is done. `probe check` must catch both.
   * - `skip_event_seq` (openai with vLLM-Omni extensions): one `server_event_seq` number is never sent.
   * - `unknown_event`: one event of a type no dialect defines, then the append is answered as usual.
   */
  action:
    | 'close'
    | 'drop'
    | 'malformed_frame'
    | 'non_finite'
    | 'fatal_error'
    | 'refuse_appends'
    | 'stop_answering'
    | 'linger'
    | 'close_in_handshake'
    | 'padded_tail'
    | 'drained_first'
    | 'skip_event_seq'
    | 'unknown_event';
  /** Only sessions whose index (in order of connection) is a multiple of this misbehave; default 1, all. */
  every_nth_session?: number;
}
