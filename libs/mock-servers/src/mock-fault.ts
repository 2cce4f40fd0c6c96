import type WebSocket from 'ws';

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
   * - `unknown_event_flood`: 20,000 events of a type no dialect defines at once, then the append is
   *   answered as usual.
   * - `binary_frame`: one binary frame, then the append is answered as usual.
   * - `oversized_frame`: one text frame (valid JSON, a type no dialect defines) of 9 MiB, past the
   *   probe's default `--max-frame-bytes` (8 MiB), then nothing more.
   * - `stop_reading`: the server neither reads nor sends from then on; the socket stays open.
   * - `no_session_closed` (native, vllm-omni): the client's close is not answered: no
   *   `session.closed`, no close of the socket.
   * - `duplicate_seq` (native, vllm-omni): one sequence number comes twice (native: the append's
   *   receipt `seq`; vllm-omni: the next `server_event_seq`), and the session goes on.
   * - `refuse_admission`: the upgrade is refused with HTTP 503, as a full server does.
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
    | 'unknown_event'
    | 'unknown_event_flood'
    | 'binary_frame'
    | 'oversized_frame'
    | 'stop_reading'
    | 'no_session_closed'
    | 'duplicate_seq'
    | 'refuse_admission';
  /** Only sessions whose index (in order of connection) is a multiple of this misbehave; default 1, all. */
  every_nth_session?: number;
}

/** Every fault, in the order `serve --fault` lists them. */
export const MOCK_FAULT_ACTIONS: ReadonlyArray<MockFault['action']> = [
  'close',
  'drop',
  'malformed_frame',
  'binary_frame',
  'oversized_frame',
  'fatal_error',
  'stop_answering',
  'stop_reading',
  'unknown_event',
  'unknown_event_flood',
  'non_finite',
  'no_session_closed',
  'duplicate_seq',
  'skip_event_seq',
  'refuse_admission',
  'refuse_appends',
  'linger',
  'close_in_handshake',
  'padded_tail',
  'drained_first',
];

/** Events `unknown_event_flood` sends. */
export const UNKNOWN_EVENT_FLOOD = 20_000;
/** The size of `oversized_frame`'s frame: past the probe's default `--max-frame-bytes` (8 MiB). */
export const OVERSIZED_FRAME_BYTES = 9 * 2 ** 20;

let oversized: string | null = null;
/** One JSON text frame of `OVERSIZED_FRAME_BYTES`, of a type no dialect defines (built once). */
export function oversizedFrame(): string {
  if (oversized) return oversized;
  const head = '{"type":"vendor.padding","pad":"';
  oversized = `${head}${'x'.repeat(OVERSIZED_FRAME_BYTES - head.length - 2)}"}`;
  return oversized;
}

/** What a dialect's session gives the shared fault code: its socket, its frames, its own shapes. */
export interface FaultTarget {
  ws: WebSocket;
  /** One text frame out, as is (through the host, so it is counted). */
  raw(frame: string): void;
  /** The start of one of the dialect's events, cut off: not JSON. */
  malformed: string;
  /** One event of a type no dialect defines, in the dialect's envelope. */
  unknown(): string;
  /** The dialect's fatal error (and, where the dialect has it, its `session.closed`); the shared code closes after. */
  fatal(): void;
  /** From now on the session sends nothing, timers and queued output included. */
  silence(): void;
  /** One of the dialect's events carrying a number JSON cannot hold (`1e999`); absent where the dialect has none. */
  nonFinite?(): void;
}

/**
 * The faults every dialect has, applied to the append at or past `after_appends` (`first`: the
 * append at it). Returns `skip` when the append must not be answered, `answer` when it is answered
 * as usual, `dialect` for a fault the session itself handles (or refuses).
 */
export function injectFault(f: MockFault, t: FaultTarget, first: boolean): 'skip' | 'answer' | 'dialect' {
  switch (f.action) {
    case 'close':
      t.ws.close(1011, 'injected fault');
      return 'skip';
    case 'drop':
      t.ws.terminate();
      return 'skip';
    case 'malformed_frame':
      t.raw(t.malformed);
      return 'skip';
    case 'fatal_error':
      t.fatal();
      t.ws.close(1011, 'injected fault');
      return 'skip';
    case 'stop_answering':
      t.silence();
      return 'skip';
    case 'stop_reading':
      if (first) {
        t.silence();
        (t.ws as unknown as { _socket?: { pause(): void } })._socket?.pause();
      }
      return 'skip';
    case 'unknown_event':
      if (first) t.raw(t.unknown());
      return 'answer';
    case 'unknown_event_flood':
      if (first) for (let i = 0; i < UNKNOWN_EVENT_FLOOD; i++) t.raw(t.unknown());
      return 'answer';
    case 'binary_frame':
      if (first) t.ws.send(Buffer.from([0x00, 0x01, 0x02, 0x03]), { binary: true });
      return 'answer';
    case 'oversized_frame':
      if (first) {
        t.raw(oversizedFrame());
        t.silence();
      }
      return 'skip';
    case 'non_finite':
      if (!t.nonFinite) return 'dialect';
      t.nonFinite();
      return 'skip';
    case 'refuse_admission':
      // The host refuses the upgrade: a session that got through is answered.
      return 'answer';
    default:
      return 'dialect';
  }
}

/** The faults shared by every dialect (`injectFault`). */
const SHARED: ReadonlyArray<MockFault['action']> = ['close', 'drop', 'malformed_frame', 'binary_frame', 'oversized_frame', 'fatal_error', 'stop_answering', 'stop_reading', 'unknown_event', 'unknown_event_flood', 'refuse_admission'];

/** The faults each dialect's mock takes (openai: `vllm_extensions` when its events carry `server_event_seq`). */
export function mockFaultsOf(dialect: 'native' | 'openai' | 'vllm-omni' | 'legacy', vllm_extensions = false): Array<MockFault['action']> {
  switch (dialect) {
    case 'native':
      return [...SHARED, 'non_finite', 'no_session_closed', 'duplicate_seq', 'refuse_appends', 'linger', 'close_in_handshake', 'padded_tail', 'drained_first'];
    case 'openai':
      return [...SHARED, 'non_finite', ...(vllm_extensions ? (['duplicate_seq', 'skip_event_seq'] as const) : [])];
    case 'vllm-omni':
      return [...SHARED, 'non_finite', 'no_session_closed', 'duplicate_seq', 'skip_event_seq'];
    case 'legacy':
      // No session.close in sglang-omni's legacy protocol: no `no_session_closed` to fake.
      return [...SHARED, 'non_finite'];
  }
}
