/**
 * One JSON object's fields read as the oracle's models read them (oracle_models.py, pydantic in
 * strict mode): `seq: true`, `seq: 0.0` and `native_unit_ms: 80.0` are all misfits.
 */
import { writtenAsFloat } from './python-json';
import { describe, isObject, isPyInt, type Int, type JsonObject } from './python-values';

/** required: absent or null is a misfit; optional: both read as null; defaulted: absent reads as null, null is a misfit. */
export type Presence = 'required' | 'optional' | 'defaulted';

/** Reads one JSON object's fields by pydantic's strict rules, noting every misfit. */
export class StrictFields {
  constructor(
    private readonly object: JsonObject,
    private readonly path: string,
    private readonly problems: string[],
  ) {}

  /** `extra="forbid"`. */
  onlyKeys(allowed: readonly string[]): void {
    for (const key of Object.keys(this.object)) {
      if (this.object[key] !== undefined && !allowed.includes(key)) this.problems.push(`${this.path}${key} is not an allowed field`);
    }
  }

  text(key: string, presence: Presence = 'optional', nonEmpty = false): string | null {
    const fits = (value: unknown) => typeof value === 'string' && (!nonEmpty || value.length > 0);
    return this.field(key, presence, nonEmpty ? 'a nonempty string' : 'a string', fits) as string | null;
  }

  /** An identifier: a nonempty string. */
  id(key: string, presence: Presence = 'optional'): string | null {
    return this.text(key, presence, true);
  }

  int(key: string, presence: Presence = 'optional', min = -Infinity, max = Infinity): Int | null {
    const asFloat = writtenAsFloat(this.object, key);
    const fits = (value: unknown) => isPyInt(value, asFloat) && value >= min && value <= max;
    const range = min === -Infinity ? '' : max === Infinity ? ` of at least ${min}` : ` from ${min} to ${max}`;
    return this.field(key, presence, `an integer${range}`, fits) as Int | null;
  }

  /**
   * A nonnegative float; an int is taken as a float, a bool or an int past the double range is not.
   * Finite everywhere: the oracle's models differ on infinities, but its records already refuse them.
   */
  nonnegative(key: string, presence: Presence = 'optional'): number | null {
    const fits = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
    return this.field(key, presence, 'a finite nonnegative number', fits) as number | null;
  }

  bool(key: string): boolean | null {
    return this.field(key, 'optional', 'a boolean', (value) => typeof value === 'boolean') as boolean | null;
  }

  literal<T>(key: string, allowed: readonly T[]): T | null {
    const fits = (value: unknown) => allowed.some((option) => option === value);
    const expected = () => (allowed.length === 1 ? describe(allowed[0]) : `one of ${allowed.map((option) => describe(option)).join(', ')}`);
    return this.field(key, 'required', expected, fits) as T | null;
  }

  dict(key: string, presence: Presence = 'optional'): JsonObject | null {
    return this.field(key, presence, 'an object', isObject) as JsonObject | null;
  }

  /** The fields of a nested model, or null when it is absent, null or not an object. */
  nested(key: string, presence: Presence = 'optional'): StrictFields | null {
    const object = this.dict(key, presence);
    return object === null ? null : new StrictFields(object, `${this.path}${key}.`, this.problems);
  }

  private field(key: string, presence: Presence, expected: string | (() => string), fits: (value: unknown) => boolean): unknown {
    const value = Object.hasOwn(this.object, key) ? this.object[key] : undefined;
    if (value === undefined) {
      if (presence === 'required') this.problems.push(`${this.path}${key} is required`);
      return null;
    }
    if (value === null && presence === 'optional') return null;
    if (!fits(value)) {
      const wanted = typeof expected === 'string' ? expected : expected();
      this.problems.push(`${this.path}${key} must be ${wanted}, got ${describe(value, writtenAsFloat(this.object, key))}`);
      return null;
    }
    return value;
  }
}
