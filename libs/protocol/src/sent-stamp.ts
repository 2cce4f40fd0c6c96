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
  const plain = plainDecimal(bytes, colon + 1, n - 1);
  if (plain !== null) return plain;
  const value = Number(bytes.toString('latin1', colon + 1, n - 1));
  return Number.isFinite(value) ? value : null;
}

/** Powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);

/**
 * `bytes[from, to)` as a number when they are a plain decimal of at most 15 digits (a sign, digits,
 * a point): its digits as one whole number over a power of ten, both exact in a double, so the one
 * division rounds as `Number` of the text does. Null for anything else (`Number` reads that).
 */
function plainDecimal(bytes: Buffer, from: number, to: number): number | null {
  let i = from;
  const negative = bytes[i] === 0x2d; /* - */
  if (negative) i++;
  let whole = 0;
  let digits = 0;
  let fraction = -1;
  for (; i < to; i++) {
    const c = bytes[i];
    if (c >= 0x30 && c <= 0x39) {
      whole = whole * 10 + (c - 0x30);
      digits++;
      if (fraction >= 0) fraction++;
    } else if (c === 0x2e /* . */ && fraction < 0) fraction = 0;
    else return null;
  }
  if (digits === 0 || digits > 15) return null;
  const value = fraction > 0 ? whole / POW10[fraction] : whole;
  return negative ? -value : value;
}

/** The host's monotonic clock, ms: what a stamp is read on. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
