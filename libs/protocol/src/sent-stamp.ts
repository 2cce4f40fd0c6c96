/**
 * The send stamp a mock adds to each frame when asked (`serve --stamp-sends`): the field, last in
 * the frame, holds the mock's send time in ms on the host's monotonic clock (CLOCK_MONOTONIC, what
 * `process.hrtime` reads in every process of the host). No dialect defines it and clients ignore
 * it; the probe's receive stamp minus it is the client's own receive delay, on one host.
 */
export const SENT_STAMP_KEY = 'duplex_bench_sent_ms';

const KEY_BYTES = Buffer.from(`,"${SENT_STAMP_KEY}":`);
/** The key, a number of at most 24 characters and the closing brace: where the stamp is, at the end. */
const TAIL_BYTES = KEY_BYTES.length + 25;
const COLON = 0x3a;

/** `frame` (a JSON object's text) with the send stamp as its last field. */
export function stampSent(frame: string, sent_ms: number): string {
  return `${frame.slice(0, -1)},"${SENT_STAMP_KEY}":${sent_ms}}`;
}

/**
 * The send stamp of a received frame, ms, or null when it has none; looks only at the frame's last
 * bytes, in JavaScript: the last colon within them, and the key just before it. Every frame a probe
 * receives is looked at, stamped or not, and a `Buffer.indexOf` call cost more than this walk.
 */
export function sentStampOf(bytes: Buffer): number | null {
  const n = bytes.length;
  const stop = Math.max(KEY_BYTES.length - 1, n - TAIL_BYTES + KEY_BYTES.length - 1);
  let colon = n - 2;
  while (colon >= stop && bytes[colon] !== COLON) colon--;
  if (colon < stop) return null;
  for (let k = KEY_BYTES.length - 1, i = colon; k >= 0; k--, i--) if (bytes[i] !== KEY_BYTES[k]) return null;
  const value = Number(bytes.toString('latin1', colon + 1, n - 1));
  return Number.isFinite(value) ? value : null;
}

/** The host's monotonic clock, ms: what a stamp is read on. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
