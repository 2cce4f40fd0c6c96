/** Bad command-line input: printed as one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}

type FlagSpec =
  | { kind: 'string'; required?: boolean; default?: string }
  | { kind: 'int'; min: number; default?: number; required?: boolean }
  | { kind: 'number'; min: number; exclusive?: boolean; default?: number; required?: boolean }
  | { kind: 'enum'; values: readonly string[]; default?: string }
  | { kind: 'bool' };

export type FlagSpecs = Record<string, FlagSpec>;

type ValueOf<S extends FlagSpec> = S extends { kind: 'bool' }
  ? boolean
  : S extends { kind: 'int' | 'number' }
    ? S extends { default: number } | { required: true }
      ? number
      : number | undefined
    : S extends { kind: 'enum' }
      ? S extends { default: string }
        ? string
        : string | undefined
      : S extends { default: string } | { required: true }
        ? string
        : string | undefined;

export type Parsed<S extends FlagSpecs> = { [K in keyof S]: ValueOf<S[K]> } & { _: string[] };

function numberFrom(name: string, raw: string, spec: { min: number; exclusive?: boolean }, integer: boolean): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be ${integer ? 'a whole number' : 'a number'}, got "${raw}"`);
  }
  if (spec.exclusive ? value <= spec.min : value < spec.min) {
    throw new UsageError(`--${name} must be ${spec.exclusive ? 'greater than' : 'at least'} ${spec.min}, got ${raw}`);
  }
  return value;
}

/**
 * Parses `--name value`, `--name=value` and bare `--flag` booleans against `specs`. Anything
 * unknown, missing or out of range is a UsageError naming the flag.
 */
export function parseFlags<S extends FlagSpecs>(argv: string[], specs: S): Parsed<S> {
  const out: Record<string, unknown> = { _: [] as string[] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      (out._ as string[]).push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq >= 0 ? eq : undefined);
    const spec = specs[name];
    if (!spec) throw new UsageError(`unknown flag --${name}`);
    if (spec.kind === 'bool') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      out[name] = true;
      continue;
    }
    let raw: string | undefined;
    if (eq >= 0) raw = arg.slice(eq + 1);
    else {
      raw = argv[i + 1];
      if (raw === undefined || (raw.startsWith('--') && spec.kind !== 'number' && spec.kind !== 'int')) {
        throw new UsageError(`--${name} needs a value`);
      }
      i++;
    }
    switch (spec.kind) {
      case 'string':
        out[name] = raw;
        break;
      case 'int':
        out[name] = numberFrom(name, raw, spec, true);
        break;
      case 'number':
        out[name] = numberFrom(name, raw, spec, false);
        break;
      case 'enum':
        if (!spec.values.includes(raw)) throw new UsageError(`--${name} must be one of ${spec.values.join('|')}, got "${raw}"`);
        out[name] = raw;
        break;
      default: {
        const never: never = spec;
        throw new Error(`unhandled flag kind ${JSON.stringify(never)}`);
      }
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (out[name] !== undefined) continue;
    if (spec.kind === 'bool') out[name] = false;
    else if ('default' in spec && spec.default !== undefined) out[name] = spec.default;
    else if ('required' in spec && spec.required) throw new UsageError(`--${name} is required`);
  }
  return out as Parsed<S>;
}
