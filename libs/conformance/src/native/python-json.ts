/**
 * JSON text read as Python's `json` module reads it, because that is what the sglang-omni oracle
 * sees: its grammar (NaN and Infinity accepted), its number types (an integer past the double range
 * stays exact), and which integral numbers were written as floats (`80.0`), which JSON.parse forgets.
 */

/**
 * Integral numbers that the trace wrote as floats (`80.0`), by the object and key that hold them.
 * The marks belong to the objects parseTraceLines returns; a copy of a record loses them.
 */
const floatLiterals = new WeakMap<object, ReadonlySet<string>>();

export function writtenAsFloat(holder: object, key: string): boolean {
  return floatLiterals.get(holder)?.has(key) ?? false;
}

const JSON_SPACE = /[ \t\n\r]*/y;
const JSON_NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
/** A run of string characters that need no attention: anything but `"`, `\` and U+0000-U+001F. */
const JSON_PLAIN = /[ !#-[\]-\uffff]*/y;
const JSON_HEX4 = /[0-9a-fA-F]{4}/y;
const JSON_LITERALS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
];
const JSON_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

/**
 * One JSON document, read with Python's json module's grammar and number types: an integer past
 * the double range stays an exact bigint (Python keeps it an int, where JSON.parse would make it
 * Infinity), and integral floats are recorded in `floatLiterals`.
 */
export class PythonJsonReader {
  private at = 0;

  constructor(private readonly text: string) {}

  read(): unknown {
    const value = this.value();
    this.skipSpace();
    if (this.at < this.text.length) throw this.error('extra data after the value');
    return value;
  }

  private value(): unknown {
    this.skipSpace();
    const next = this.text[this.at];
    if (next === '{') return this.object();
    if (next === '[') return this.array();
    if (next === '"') return this.string();
    for (const [word, value] of JSON_LITERALS) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.number();
  }

  private object(): Record<string, unknown> {
    this.at++;
    const entries = new Map<string, unknown>();
    const floats = new Set<string>();
    this.skipSpace();
    if (this.text[this.at] === '}') {
      this.at++;
      return {};
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] !== '"') throw this.error('expected a property name in double quotes');
      const key = this.string();
      this.skipSpace();
      this.expect(':');
      const start = this.at;
      const value = this.value();
      // A repeated key keeps its first position and takes the last value, as in a Python dict.
      entries.set(key, value);
      if (typeof value === 'number' && Number.isInteger(value) && /[.eE]/.test(this.text.slice(start, this.at))) floats.add(key);
      else floats.delete(key);
      this.skipSpace();
      if (this.text[this.at] !== ',') break;
      this.at++;
    }
    this.expect('}');
    // fromEntries defines own properties, so a "__proto__" key stays data.
    const object = Object.fromEntries(entries);
    if (floats.size > 0) floatLiterals.set(object, floats);
    return object;
  }

  private array(): unknown[] {
    this.at++;
    const items: unknown[] = [];
    this.skipSpace();
    if (this.text[this.at] === ']') {
      this.at++;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.skipSpace();
      if (this.text[this.at] !== ',') break;
      this.at++;
    }
    this.expect(']');
    return items;
  }

  private string(): string {
    this.at++;
    let out = '';
    for (;;) {
      JSON_PLAIN.lastIndex = this.at;
      JSON_PLAIN.test(this.text);
      out += this.text.slice(this.at, JSON_PLAIN.lastIndex);
      this.at = JSON_PLAIN.lastIndex;
      const next = this.text[this.at];
      if (next === '"') {
        this.at++;
        return out;
      }
      if (next !== '\\') throw this.error(next === undefined ? 'unterminated string' : 'control character in a string');
      out += this.escape();
    }
  }

  private escape(): string {
    const code = this.text[this.at + 1];
    if (code === 'u') {
      JSON_HEX4.lastIndex = this.at + 2;
      if (!JSON_HEX4.test(this.text)) throw this.error('invalid \\u escape');
      this.at += 6;
      // Lone surrogates are kept and adjacent halves join, as Python's json does.
      return String.fromCharCode(parseInt(this.text.slice(this.at - 4, this.at), 16));
    }
    const char = code === undefined ? undefined : JSON_ESCAPES.get(code);
    if (char === undefined) throw this.error('invalid escape');
    this.at += 2;
    return char;
  }

  private number(): number | bigint {
    JSON_NUMBER.lastIndex = this.at;
    const match = JSON_NUMBER.exec(this.text);
    if (match === null) throw this.error('expected a value');
    this.at = JSON_NUMBER.lastIndex;
    const value = Number(match[0]);
    const isFloat = match[1] !== undefined || match[2] !== undefined;
    return isFloat || Number.isFinite(value) ? value : BigInt(match[0]);
  }

  private skipSpace(): void {
    JSON_SPACE.lastIndex = this.at;
    JSON_SPACE.test(this.text);
    this.at = JSON_SPACE.lastIndex;
  }

  private expect(char: string): void {
    if (this.text[this.at] !== char) throw this.error(`expected '${char}'`);
    this.at++;
  }

  private error(what: string): SyntaxError {
    return new SyntaxError(`${what} at column ${this.at + 1}`);
  }
}
