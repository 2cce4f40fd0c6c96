import { Command, CommanderError, Option } from 'commander';

/** Bad command-line input: printed as one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}

/** Where a flag is listed in `--help`, in this order. */
export const FLAG_GROUPS = {
  connection: 'Connection',
  load: 'Load',
  dialect: 'Dialect',
  input: 'Input',
  model: 'Model',
  output: 'Output',
  limits: 'Timeouts and limits',
  telemetry: 'Live telemetry',
  testing: 'Testing and diagnosis',
} as const;

export type FlagGroup = keyof typeof FLAG_GROUPS;

/** What every flag says of itself in `--help`: one line with its unit, and its group. */
interface Described {
  help: string;
  group: FlagGroup;
  /** The value's name in `--help` (`N`, `S`, `URL`); defaults by kind. */
  value?: string;
}

export type FlagSpec = Described &
  (
    | { kind: 'string'; required?: boolean; default?: string }
    | { kind: 'int'; min: number; default?: number; required?: boolean }
    | { kind: 'number'; min: number; exclusive?: boolean; default?: number; required?: boolean }
    | { kind: 'enum'; values: readonly string[]; default?: string }
    | { kind: 'bool' }
    /** Given any number of times; the values in order. */
    | { kind: 'list'; required?: boolean }
  );

export type FlagSpecs = Record<string, FlagSpec>;

type ValueOf<S extends FlagSpec> = S extends { kind: 'bool' }
  ? boolean
  : S extends { kind: 'list' }
    ? string[]
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

/** The value of `--name raw` by its spec; a UsageError naming the flag when it does not fit. */
function valueFrom(name: string, raw: string, spec: FlagSpec): string | number {
  switch (spec.kind) {
    case 'int':
      return numberFrom(name, raw, spec, true);
    case 'number':
      return numberFrom(name, raw, spec, false);
    case 'enum':
      if (!spec.values.includes(raw)) throw new UsageError(`--${name} must be one of ${spec.values.join('|')}, got "${raw}"`);
      return raw;
    default:
      return raw;
  }
}

const VALUE_NAMES: Record<FlagSpec['kind'], string> = { string: 'VALUE', int: 'N', number: 'X', enum: 'NAME', bool: '', list: 'VALUE' };

function optionOf(name: string, spec: FlagSpec): Option {
  if (spec.kind === 'bool') return new Option(`--${name}`, spec.help).helpGroup(`${FLAG_GROUPS[spec.group]}:`);
  const value = spec.value ?? (spec.kind === 'enum' ? spec.values.join('|') : VALUE_NAMES[spec.kind]);
  const required = 'required' in spec && spec.required === true;
  const help = `${spec.help}${spec.kind === 'list' ? ' (repeatable)' : ''}${required ? ' (required)' : ''}`;
  const option = new Option(`--${name} <${value}>`, help).helpGroup(`${FLAG_GROUPS[spec.group]}:`);
  if (spec.kind === 'list') return option.argParser((raw: string, previous: string[] | undefined) => [...(previous ?? []), raw]);
  option.argParser((raw: string) => valueFrom(name, raw, spec));
  if (spec.default !== undefined) option.default(spec.default);
  return option;
}

/** A commander command holding `specs`, for parsing (silent, throwing) or for its `--help`. */
export function commandOf(name: string, specs: FlagSpecs, about?: { summary: string; usage: string }): Command {
  const cmd = new Command(name).helpOption('-h, --help', 'show this help and exit').allowExcessArguments(true).exitOverride();
  if (about) cmd.description(about.summary).usage(about.usage);
  // Groups in a fixed order, whatever order the flags were declared in.
  const order = Object.keys(FLAG_GROUPS) as FlagGroup[];
  const names = Object.keys(specs).sort((a, b) => order.indexOf(specs[a].group) - order.indexOf(specs[b].group));
  for (const name of names) cmd.addOption(optionOf(name, specs[name]));
  return cmd;
}

/** Commander's own parse errors, as one line naming the flag. */
function usageErrorOf(err: CommanderError): UsageError {
  const flag = /'(--[\w-]+)/.exec(err.message)?.[1];
  switch (err.code) {
    case 'commander.unknownOption':
      return new UsageError(`unknown flag ${flag ?? err.message}`);
    case 'commander.optionMissingArgument':
      return new UsageError(`${flag} needs a value`);
    default:
      return new UsageError(err.message.replace(/^error: /, '').split('\n')[0]);
  }
}

/**
 * Parses `--name value`, `--name=value` and bare `--flag` booleans against `specs` with commander.
 * Anything unknown, missing or out of range is a UsageError naming the flag. Arguments that are not
 * flags are returned in order as `_`.
 */
export function parseFlags<S extends FlagSpecs>(argv: string[], specs: S): Parsed<S> {
  const cmd = commandOf('command', specs).configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  cmd.helpOption(false);
  for (const arg of argv) {
    const name = /^--([\w-]+)=/.exec(arg)?.[1];
    if (name && specs[name]?.kind === 'bool') throw new UsageError(`--${name} takes no value`);
  }
  try {
    cmd.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw usageErrorOf(err);
    throw err;
  }
  const values = cmd.opts();
  const out: Record<string, unknown> = { _: [...cmd.args] };
  for (const [name, spec] of Object.entries(specs)) {
    const option = cmd.options.find((o) => o.long === `--${name}`) as Option;
    const value = values[option.attributeName()];
    // Checked here, after commander's own checks, so an unknown flag is named before a missing one.
    if (value === undefined && 'required' in spec && spec.required) throw new UsageError(`--${name} is required`);
    // Commander reads `--no-x` as x negated (true unless given); here a flag is true when given.
    if (spec.kind === 'bool') out[name] = option.negate ? value === false : value === true;
    else if (spec.kind === 'list') out[name] = value ?? [];
    else out[name] = value;
  }
  return out as Parsed<S>;
}

/** The `--help` text of one command: its usage, what it does, and every flag by group with its default. */
export function helpOf(name: string, specs: FlagSpecs, about: { summary: string; usage: string }): string {
  return commandOf(name, specs, about).helpInformation();
}
