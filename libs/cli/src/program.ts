import { Command } from 'commander';
import { EXIT, type RunIo } from './command-io';
import { helpOf, UsageError, type FlagSpecs } from './flags';

/** One subcommand: its flags (for `--help` and parsing) and what runs it. */
export interface CliCommand {
  name: string;
  /** One line: what it does. */
  summary: string;
  /** Its arguments after the name, e.g. `--url URL --concurrency N --duration S --output DIR [flags]`. */
  usage: string;
  flags: FlagSpecs;
  /** It takes `--json`: the final summary as one JSON line on stdout, human lines on stderr. */
  json?: boolean;
  run(argv: string[], io: RunIo): Promise<number>;
}

export interface CliProgram {
  name: string;
  version: string;
  summary: string;
  commands: CliCommand[];
  /**
   * The libs' own errors that mean bad input, as a UsageError (one line on stderr, status 2); any
   * other error is a failure (status 1). Libs throw their own coded errors; the app says which are the user's.
   */
  usageOf?(err: unknown): UsageError | undefined;
}

const HELP = new Set(['--help', '-h']);

/** `--json` listed with a command's flags. */
const JSON_FLAG: FlagSpecs = {
  json: { kind: 'bool', group: 'output', help: 'the final summary as one JSON line on stdout; the human lines go to stderr' },
};

export function flagsOf(command: CliCommand): FlagSpecs {
  return command.json ? { ...command.flags, ...JSON_FLAG } : command.flags;
}

/** The program's own `--help`: its commands, and the exit statuses they share. */
export function programHelp(program: CliProgram): string {
  const cmd = new Command(program.name).description(program.summary).usage('<command> [flags]').helpOption('-h, --help', 'show this help and exit');
  cmd.version(program.version, '-V, --version', 'print the version and exit');
  cmd.helpCommand('help [command]', 'show the help of a command');
  for (const c of program.commands) cmd.command(c.name).description(c.summary);
  return cmd.helpInformation() + `\nEvery command answers --help. Exit status: 0 done, 1 failed, 2 bad input, 3 pacing unqualified (the client missed its cadence), 130 interrupted.\n`;
}

/**
 * Runs one command line of `program`: `--help` and `--version` at any level, the command, and its
 * exit status. Bad input is one line on stderr and status 2; any other failure one line and 1.
 */
export async function runProgram(program: CliProgram, argv: string[], io: RunIo): Promise<number> {
  const [name, ...rest] = argv;
  try {
    const asked = name === 'help' ? program.commands.find((c) => c.name === rest[0]) : undefined;
    if (asked) {
      io.stdout.write(helpOf(`${program.name} ${asked.name}`, flagsOf(asked), { summary: asked.summary, usage: asked.usage }));
      return EXIT.ok;
    }
    if (name === undefined || HELP.has(name) || name === 'help') {
      io.stdout.write(programHelp(program));
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === '--version' || name === '-V') {
      io.stdout.write(`${program.version}\n`);
      return EXIT.ok;
    }
    const command = program.commands.find((c) => c.name === name);
    if (!command) throw new UsageError(`unknown command "${name}"; the commands are ${program.commands.map((c) => c.name).join(', ')} (--help lists them)`);
    if (rest.some((a) => HELP.has(a))) {
      io.stdout.write(helpOf(`${program.name} ${command.name}`, flagsOf(command), { summary: command.summary, usage: command.usage }));
      return EXIT.ok;
    }
    const json = command.json === true && rest.includes('--json');
    if (!json) return await command.run(rest, io);
    const out = io.stdout;
    return await command.run(
      rest.filter((a) => a !== '--json'),
      { ...io, argv: io.argv.filter((a) => a !== '--json'), stdout: io.stderr, emit: (summary) => out.write(`${JSON.stringify(summary)}\n`) },
    );
  } catch (err) {
    const usage = err instanceof UsageError ? err : program.usageOf?.(err);
    if (usage) {
      io.stderr.write(`error: ${usage.message}\n`);
      return EXIT.usage;
    }
    io.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.DUPLEX_BENCH_DEBUG) io.stderr.write(`${(err as Error).stack}\n`);
    return EXIT.failed;
  }
}

/** The io of a real process: its streams, its signals, and `process.exit`. */
export function processIo(argv: string[]): RunIo {
  return { stdout: process.stdout, stderr: process.stderr, signals: process, exitNow: (code: number) => process.exit(code), argv };
}

/**
 * Node carves small Buffers (an append, a frame spliced from its parts) from 8 KiB slabs, one
 * malloc'd ArrayBuffer per two appends. A process of ours moves kilobytes a frame thousands of times
 * a second: with 64 KiB slabs the probe cost 0.95× [0.87–0.99×] and the mock 0.93× per packet at 512
 * sessions (steady state, three interleaved pairs, tools/bench/steady-cpu.sh; docs/performance.md).
 */
export const BUFFER_POOL_BYTES = 64 * 1024;

/** Runs `program` as this process's main, then exits with its status (a handle left open cannot keep it alive). */
export function mainOf(program: CliProgram): void {
  Buffer.poolSize = BUFFER_POOL_BYTES;
  const argv = process.argv.slice(2);
  runProgram(program, argv, processIo(argv.slice(1))).then((code) => {
    process.exitCode = code;
    setTimeout(() => process.exit(code), 5000).unref();
  });
}
