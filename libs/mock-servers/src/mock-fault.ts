/** A fault a test server injects after `after_appends` appends on every session. */
export interface MockFault {
  after_appends: number;
  /**
   * `skip_event_seq` (openai with vLLM-Omni extensions): one `server_event_seq` number is never sent.
   * `unknown_event`: one event of a type no dialect defines, then the append is answered as usual.
   */
  action: 'close' | 'malformed_frame' | 'fatal_error' | 'stop_answering' | 'skip_event_seq' | 'unknown_event';
  /** Only sessions whose index (in order of connection) is a multiple of this misbehave; default 1, all. */
  every_nth_session?: number;
}
