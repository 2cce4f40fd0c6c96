/** `argv` without the given flags and their values (`--name value` and `--name=value`). */
export function withoutFlags(argv: string[], names: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = names.find((n) => argv[i] === `--${n}` || argv[i].startsWith(`--${n}=`));
    if (!name) out.push(argv[i]);
    else if (argv[i] === `--${name}`) i++;
  }
  return out;
}
