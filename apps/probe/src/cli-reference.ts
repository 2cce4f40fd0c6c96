/**
 * docs/cli.md, the CLI reference: the `--help` of `duplex-bench` and of each of its commands, taken
 * in this process from the program itself (DUPLEX_BENCH, what bin/duplex-bench.js runs). Nothing of
 * the executable uses it: tools/cli-reference.ts writes the page, and cli-reference.spec.ts fails
 * when the page and the help differ.
 *
 * The help is the text a pipe gets (`duplex-bench run --help | cat`): commander wraps it to the
 * terminal's width only when stdout is a terminal, and to 80 columns otherwise.
 */
import { runProgram, type RunIo } from '@duplex-bench/cli';
import { DUPLEX_BENCH } from './duplex-bench';

/** The command that writes it, as the page and the spec's failure name it. */
export const CLI_REFERENCE_COMMAND = 'node --import tsx tools/cli-reference.ts';

/** What `duplex-bench ARGV` prints on stdout when stdout is not a terminal; it must exit 0 and print nothing on stderr. */
async function printed(argv: string[]): Promise<string> {
  let out = '';
  let err = '';
  const io: RunIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    signals: { on: () => undefined, off: () => undefined },
    exitNow: () => undefined,
    argv,
  };
  // Commander reads process.stdout.isTTY for the help's width (and colours): the page is a pipe's help, whatever runs this.
  const stdout = process.stdout as { isTTY?: boolean };
  const own = Object.getOwnPropertyDescriptor(stdout, 'isTTY');
  Object.defineProperty(stdout, 'isTTY', { value: false, configurable: true, writable: true });
  let code: number;
  try {
    code = await runProgram(DUPLEX_BENCH, argv, io);
  } finally {
    if (own) Object.defineProperty(stdout, 'isTTY', own);
    else delete stdout.isTTY;
  }
  if (code !== 0 || err !== '') throw new Error(`duplex-bench ${argv.join(' ')} exited ${code}${err ? `: ${err.trim()}` : ''}`);
  return out;
}

/** A code fence longer than any run of backticks in `text`. */
function fenced(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text.endsWith('\n') ? text : `${text}\n`}${fence}\n`;
}

/** docs/cli.md as the program's help makes it now. */
export async function cliReference(): Promise<string> {
  const name = DUPLEX_BENCH.name;
  const commands = DUPLEX_BENCH.commands.map((c) => c.name);
  const parts = [
    '# CLI reference\n',
    `Every command's \`--help\`, as \`${name} --help\` and \`${name} <command> --help\` print it (to a pipe: 80`,
    'columns). Generated from the program by',
    '',
    '```',
    CLI_REFERENCE_COMMAND,
    '```',
    '',
    'and held equal to the help by `apps/probe/src/cli-reference.spec.ts`: after changing a flag, run the',
    'command above and commit this page with the change. The flags of `run` and `record` at more length:',
    '[flags.md](flags.md).',
    '',
    `Commands: ${commands.map((c) => `[${c}](#${name}-${c})`).join(', ')}.`,
    '',
    `## ${name}\n`,
    fenced(await printed(['--help'])),
  ];
  for (const command of commands) parts.push(`## ${name} ${command}\n`, fenced(await printed([command, '--help'])));
  return parts.join('\n');
}
