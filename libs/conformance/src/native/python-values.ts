/**
 * Values as the oracle's Python sees them: JSON values by Python's types, `dict.get` and `==`;
 * messages that show them as the oracle prints them; base64 as `b64decode(validate=True)` takes it;
 * unit numbers as `isdigit()` and `int()` read them.
 */

// ---- JSON values ----

export type JsonObject = Record<string, unknown>;
/** A Python int: a double while it is exact enough, a bigint past the double range. */
export type Int = number | bigint;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `dict.get`: null (Python's None) for an absent key. */
export function pyGet(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? (object[key] ?? null) : null;
}

export function dig(object: JsonObject, ...path: string[]): unknown {
  let value: unknown = object;
  for (const key of path) value = isObject(value) ? pyGet(value, key) : null;
  return value;
}

export function isPyInt(value: unknown, asFloat: boolean): value is Int {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value) && !asFloat);
}

/** Python's `type(value).__name__` for a JSON value. */
export function pyType(value: unknown, asFloat = false): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number' || typeof value === 'bigint') return isPyInt(value, asFloat) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  return Array.isArray(value) ? 'list' : 'dict';
}

/** Python's `==` on JSON values: numbers by value across int, float and bool, containers element by element. */
export function pyEqual(a: unknown, b: unknown): boolean {
  const numeric = (value: unknown) => (typeof value === 'boolean' ? Number(value) : value);
  const x = numeric(a);
  const y = numeric(b);
  if ((typeof x === 'number' || typeof x === 'bigint') && (typeof y === 'number' || typeof y === 'bigint')) return x == y;
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((item, i) => pyEqual(item, y[i]));
  if (isObject(x) && isObject(y)) {
    const keys = Object.keys(x);
    return keys.length === Object.keys(y).length && keys.every((key) => Object.hasOwn(y, key) && pyEqual(x[key], y[key]));
  }
  return x === y;
}

/** A value as a message shows it, floats with their point so `80.0` is told from `80`. */
export function describe(value: unknown, asFloat = false): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' && asFloat && Number.isInteger(value)) return `${value}.0`;
  if (typeof value !== 'object' || value === null) return String(value);
  const text = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? String(item) : item));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** A name or message from the trace, as the oracle prints Python's None. */
export function show(value: unknown): string {
  return value === null || value === undefined ? 'none' : typeof value === 'string' ? value : describe(value);
}

// ---- base64 payloads ----

const BASE64_ALPHABET_RUN = /[A-Za-z0-9+/]*/y;
const ONLY_PADDING = /^=*$/;

/**
 * Bytes a base64 payload decodes to under Python 3.11-3.12's `b64decode(validate=True)`, or null
 * where it raises: the standard alphabet only, then padding that completes the last quad. After a
 * whole quad, stray '=' are ignored, except in a payload that is nothing but '='.
 */
export function strictBase64Bytes(payload: string): number | null {
  BASE64_ALPHABET_RUN.lastIndex = 0;
  BASE64_ALPHABET_RUN.test(payload);
  const data = BASE64_ALPHABET_RUN.lastIndex;
  const padding = payload.slice(data);
  if (!ONLY_PADDING.test(padding)) return null;
  const partial = data % 4;
  const padded = partial === 0 ? data > 0 || padding === '' : partial === 2 ? padding === '==' : partial === 3 && padding === '=';
  return padded ? ((data - partial) / 4) * 3 + Math.max(0, partial - 1) : null;
}

// ---- native unit ids ----

const DECIMAL_DIGIT = /^\p{Nd}$/u;
const DECIMAL_DIGITS = /^\p{Nd}+$/u;

/**
 * The number in `unit_N`, or null when N is not all decimal digits. Python's isdigit() and int()
 * take any Unicode decimal digit (`unit_٣` is unit 3 to the oracle), and its ints have no ceiling.
 */
export function unitNumber(digits: string): bigint | null {
  if (!DECIMAL_DIGITS.test(digits)) return null;
  let ascii = '';
  for (const char of digits) ascii += decimalDigitValue(char.codePointAt(0) as number);
  return BigInt(ascii);
}

/** Unicode encodes every set of decimal digits as ten consecutive code points, zero first. */
function decimalDigitValue(codePoint: number): number {
  let zero = codePoint;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return (codePoint - zero) % 10;
}
