/**
 * Whether bytes hold one JSON object (RFC 8259) and nothing else but white space, checked without
 * building it. A server's small frames (acknowledgements, unit ends) are mostly never read; parsing
 * each only to learn that it is well formed cost a JSON object, its interned keys and its garbage per
 * frame. This check walks the bytes once and allocates nothing; a frame that is read is parsed then.
 *
 * The bytes must be valid UTF-8 (ws checks every text frame before it is delivered), so bytes at or
 * above 0x80 inside strings are accepted as they stand.
 */

/** The check's answer. `unsure`: a number that may not fit a double, or nesting deeper than the check follows. */
export type JsonCheck = 'valid' | 'invalid' | 'unsure';

const MAX_DEPTH = 64;
/** Longer runs of digits, or exponents of three digits or more, may parse to Infinity: `Unsure`. */
const MAX_PLAIN_DIGITS = 15;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

/** Set when a number or the nesting is past what the check answers for. */
let unsure = false;

/** JSON's white space: space, line feed, carriage return, tab. */
export function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The index of the first byte at or after `i` that is not JSON white space. */
export function skipJsonSpace(b: Uint8Array, i: number): number {
  while (i < b.length && isJsonSpace(b[i])) i++;
  return i;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The index after a string whose opening quote is at `i - 1`, or -1. */
function string(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i++];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) {
      const e = b[i++];
      if (e === 0x75 /* u */) {
        if (i + 4 > n || !isHex(b[i]) || !isHex(b[i + 1]) || !isHex(b[i + 2]) || !isHex(b[i + 3])) return -1;
        i += 4;
      } else if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
        return -1;
      }
    } else if (c < 0x20) {
      return -1;
    }
  }
  return -1;
}

function number(b: Uint8Array, i: number): number {
  if (b[i] === MINUS) i++;
  const start = i;
  if (b[i] === ZERO) i++;
  else if (isDigit(b[i])) while (isDigit(b[i])) i++;
  else return -1;
  let digits = i - start;
  if (b[i] === DOT) {
    const from = ++i;
    while (isDigit(b[i])) i++;
    if (i === from) return -1;
    digits += i - from;
  }
  if (b[i] === 0x65 || b[i] === 0x45 /* e E */) {
    i++;
    if (b[i] === PLUS || b[i] === MINUS) i++;
    const from = i;
    while (isDigit(b[i])) i++;
    if (i === from) return -1;
    if (i - from >= 3) unsure = true;
  }
  if (digits > MAX_PLAIN_DIGITS) unsure = true;
  return i;
}

function literal(b: Uint8Array, i: number, word: Buffer): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}

function value(b: Uint8Array, i: number, depth: number): number {
  const c = b[i];
  if (c === OPEN_BRACE) return object(b, i + 1, depth + 1);
  if (c === OPEN_BRACKET) return array(b, i + 1, depth + 1);
  if (c === QUOTE) return string(b, i + 1);
  if (c === MINUS || isDigit(c)) return number(b, i);
  if (c === 0x74) return literal(b, i, TRUE);
  if (c === 0x66) return literal(b, i, FALSE);
  if (c === 0x6e) return literal(b, i, NULL);
  return -1;
}

function object(b: Uint8Array, i: number, depth: number): number {
  if (depth > MAX_DEPTH) {
    unsure = true;
    return -1;
  }
  i = skipJsonSpace(b, i);
  if (b[i] === CLOSE_BRACE) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    i = string(b, i + 1);
    if (i < 0) return -1;
    i = skipJsonSpace(b, i);
    if (b[i] !== COLON) return -1;
    i = value(b, skipJsonSpace(b, i + 1), depth);
    if (i < 0) return -1;
    i = skipJsonSpace(b, i);
    if (b[i] === CLOSE_BRACE) return i + 1;
    if (b[i] !== COMMA) return -1;
    i = skipJsonSpace(b, i + 1);
  }
}

function array(b: Uint8Array, i: number, depth: number): number {
  if (depth > MAX_DEPTH) {
    unsure = true;
    return -1;
  }
  i = skipJsonSpace(b, i);
  if (b[i] === CLOSE_BRACKET) return i + 1;
  for (;;) {
    i = value(b, i, depth);
    if (i < 0) return -1;
    i = skipJsonSpace(b, i);
    if (b[i] === CLOSE_BRACKET) return i + 1;
    if (b[i] !== COMMA) return -1;
    i = skipJsonSpace(b, i + 1);
  }
}

/** Checks that `b` is one JSON object, white space around it allowed. */
export function checkJsonObject(b: Uint8Array): JsonCheck {
  unsure = false;
  const start = skipJsonSpace(b, 0);
  if (b[start] !== OPEN_BRACE) return 'invalid';
  const end = object(b, start + 1, 1);
  if (unsure) return 'unsure';
  return end >= 0 && skipJsonSpace(b, end) === b.length ? 'valid' : 'invalid';
}
