/**
 * The reference clock of sharded runs: `GET` here on the server's host and port answers
 * `{"epoch_ms": …}`, that host's wall clock with sub-millisecond digits. Our mock serves it; in
 * front of a real server, any service on the same host that answers the same way does.
 */
export const TIME_PATH = '/duplex-bench/time';
