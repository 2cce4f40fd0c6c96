/** Why a request did not complete. */
export type RequestErrorClass =
  | 'connect_failed' // no connection to the server
  | 'http_status' // a status other than 200 (the status says which)
  | 'timeout' // no end within --request-timeout-s
  | 'queue_timeout' // --max-concurrency: still in the client's queue at --request-timeout-s; the server never saw it
  | 'stream_error' // an error event in the stream, or a payload that is not JSON
  | 'truncated' // the stream ended without [DONE] (streamed) or without a parseable body
  | 'reset' // the connection broke mid-response
  | 'interrupted'; // SIGINT ended the run first

/** Where a request's output token count came from: the server's usage, our `--tokenizer`, or counted chunks. */
export type TokensOrigin = 'usage' | 'tokenizer' | 'chunks';

/**
 * One request as the client saw it. Times are seconds on the host's monotonic clock; null where
 * the request never got that far.
 */
export interface RequestRecord {
  index: number;
  /** When the schedule meant it to go (open loop); when its lane was free (closed loop). */
  intended_s: number;
  /**
   * When the client let it go to the server: its intended time, or with `--max-concurrency` the
   * time a place came free (vLLM's send time after its semaphore); null while it waited and never went.
   * dispatched − intended is the client's queue, on purpose; the server's latencies run from here.
   */
  dispatched_s: number | null;
  /** When the client handed it to a connection (undici's request start): actual − dispatched is the client's own lag. */
  started_s: number | null;
  /** Response headers. */
  first_byte_s: number | null;
  /** The first chunk that carried output (an empty role chunk does not count). */
  first_token_s: number | null;
  /** The second chunk that carried output (time to second token). */
  second_token_s: number | null;
  last_token_s: number | null;
  end_s: number | null;
  /** Chunks that carried output. */
  chunks: number;
  /** Output tokens: the server's usage.completion_tokens when it sent one, else the output counted by `--tokenizer`, else `chunks`. */
  tokens: number;
  tokens_origin: TokensOrigin;
  prompt_tokens: number | null;
  status: number | null;
  error: RequestErrorClass | null;
  message?: string;
}

export function newRecord(index: number, intended_s: number): RequestRecord {
  return {
    index,
    intended_s,
    dispatched_s: null,
    started_s: null,
    first_byte_s: null,
    first_token_s: null,
    second_token_s: null,
    last_token_s: null,
    end_s: null,
    chunks: 0,
    tokens: 0,
    tokens_origin: 'chunks',
    prompt_tokens: null,
    status: null,
    error: null,
  };
}
