import { EventEmitter } from 'node:events';
import type { RunIo } from './command-io';
import { UsageError } from './flags';
import { BUFFER_POOL_BYTES, flagsOf, mainOf, processIo, programHelp, runProgram, type CliCommand, type CliProgram } from './program';

/** A lib's own coded error that the app says is bad input. */
class BadDialectError extends Error {
  readonly code = 'BAD_DIALECT';
}

/** What a command was called with, and what it does: its status, or a throw. */
interface Call {
  argv: string[];
  io: RunIo;
}

function command(name: string, json: boolean, act: (call: Call) => number | Promise<number> = () => 0): CliCommand & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    name,
    summary: `${name} things`,
    usage: `--url URL [flags]`,
    flags: { url: { kind: 'string', group: 'connection', help: 'server endpoint', value: 'URL' } },
    ...(json ? { json } : {}),
    calls,
    async run(argv, io) {
      const call = { argv, io };
      calls.push(call);
      return act(call);
    },
  };
}

function fakeIo(argv: string[] = []) {
  const out: string[] = [];
  const err: string[] = [];
  const io: RunIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    signals: new EventEmitter(),
    exitNow: () => undefined,
    argv,
  };
  return { io, out, err, text: () => out.join(''), errors: () => err.join('') };
}

const program = (commands: CliCommand[], usageOf?: CliProgram['usageOf']): CliProgram => ({ name: 'kit', version: '9.8.7', summary: 'a kit of things', commands, usageOf });

describe('runProgram', () => {
  it("runs the command named, with the rest of the line, and returns the command's status", async () => {
    const run = command('run', false, () => 3);
    const merge = command('merge', false);
    const { io } = fakeIo(['--url', 'ws://h']);
    expect(await runProgram(program([run, merge]), ['run', '--url', 'ws://h'], io)).toBe(3);
    expect(run.calls).toEqual([{ argv: ['--url', 'ws://h'], io }]);
    expect(merge.calls).toEqual([]);
  });

  it('prints its own help on --help, -h or help (status 0), and with no command at all (status 2)', async () => {
    const commands = [command('run', false), command('merge', false)];
    for (const [argv, status] of [[['--help'], 0], [['-h'], 0], [['help'], 0], [['help', 'nothing'], 0], [[], 2]] as const) {
      const { io, text } = fakeIo();
      expect(await runProgram(program(commands), [...argv], io)).toBe(status);
      expect(text()).toBe(programHelp(program(commands)));
    }
    expect(commands.flatMap((c) => c.calls)).toEqual([]);
  });

  it('lists every command with its summary and the exit statuses in its help', () => {
    const help = programHelp(program([command('run', false), command('merge', false)]));
    expect(help).toMatch(/^Usage: kit <command> \[flags\]/);
    expect(help).toMatch(/\n\s+run\s+run things\n/);
    expect(help).toMatch(/\n\s+merge\s+merge things\n/);
    expect(help).toMatch(/-V, --version\s+print the version and exit/);
    expect(help).toMatch(/Exit status: 0 done, 1 failed, 2 bad input, 3 pacing unqualified .*, 130 interrupted\.\n$/);
  });

  it('prints the version on --version or -V', async () => {
    for (const flag of ['--version', '-V']) {
      const { io, text } = fakeIo();
      expect(await runProgram(program([command('run', false)]), [flag], io)).toBe(0);
      expect(text()).toBe('9.8.7\n');
    }
  });

  it("prints a command's help, its flags with --json where it takes it, on help <command> or --help anywhere after it, without running it", async () => {
    const run = command('run', true);
    const merge = command('merge', false);
    for (const argv of [['help', 'run'], ['run', '--help'], ['run', '--url', 'u', '-h']]) {
      const { io, text } = fakeIo();
      expect(await runProgram(program([run, merge]), argv, io)).toBe(0);
      expect(text()).toMatch(/^Usage: kit run --url URL \[flags\]\n/);
      expect(text()).toMatch(/--url <URL>\s+server endpoint/);
      expect(text()).toMatch(/--json\s+the final summary as one JSON line on stdout/);
    }
    const { io, text } = fakeIo();
    await runProgram(program([run, merge]), ['merge', '--help'], io);
    expect(text()).toMatch(/^Usage: kit merge /);
    expect(text()).not.toContain('--json');
    expect(run.calls.length + merge.calls.length).toBe(0);
  });

  it('says an unknown command is bad input, naming the commands there are', async () => {
    const { io, out, errors } = fakeIo();
    expect(await runProgram(program([command('run', false), command('merge', false)]), ['rnu'], io)).toBe(2);
    expect(errors()).toBe('error: unknown command "rnu"; the commands are run, merge (--help lists them)\n');
    expect(out).toEqual([]);
  });

  describe('--json', () => {
    it('puts only the summary, one JSON line, on stdout; the human lines go to stderr; the command never sees the flag', async () => {
      const run = command('run', true, ({ io }) => {
        io.stdout.write('progress: 4 sessions\n');
        io.emit?.({ qualified: true, ttfp_ms: { p99: 412.5 } });
        return 0;
      });
      const { io, out, errors } = fakeIo(['--url', 'u', '--json', '--quiet']);
      io.typed = ['run', '--url', 'u', '--json', '--quiet', '--report'];
      expect(await runProgram(program([run]), ['run', '--url', 'u', '--json', '--quiet'], io)).toBe(0);
      expect(out).toEqual(['{"qualified":true,"ttfp_ms":{"p99":412.5}}\n']);
      expect(errors()).toBe('progress: 4 sessions\n');
      expect(run.calls[0].argv).toEqual(['--url', 'u', '--quiet']);
      expect(run.calls[0].io.argv).toEqual(['--url', 'u', '--quiet']);
      // What the user typed is kept as typed.
      expect(run.calls[0].io.typed).toEqual(io.typed);
    });

    it('is left to a command that does not take it, and a command run without it has no summary sink', async () => {
      const merge = command('merge', false);
      const run = command('run', true);
      const { io } = fakeIo();
      await runProgram(program([merge, run]), ['merge', '--json'], io);
      expect(merge.calls[0].argv).toEqual(['--json']);
      expect(merge.calls[0].io.emit).toBeUndefined();
      await runProgram(program([merge, run]), ['run', '--url', 'u'], io);
      expect(run.calls[0].io).toBe(io);
      expect(run.calls[0].io.emit).toBeUndefined();
    });
  });

  describe('a command that throws', () => {
    const saved = process.env.DUPLEX_BENCH_DEBUG;
    afterEach(() => {
      if (saved === undefined) delete process.env.DUPLEX_BENCH_DEBUG;
      else process.env.DUPLEX_BENCH_DEBUG = saved;
    });

    const failing = (thrown: unknown, usageOf?: CliProgram['usageOf']) => {
      const { io, errors } = fakeIo();
      const run = command('run', false, () => {
        throw thrown;
      });
      return { status: runProgram(program([run], usageOf), ['run'], io), errors };
    };

    it('on a UsageError, says it in one line and returns 2', async () => {
      const { status, errors } = failing(new UsageError('--url is required'));
      expect(await status).toBe(2);
      expect(errors()).toBe('error: --url is required\n');
    });

    it("on a lib's error that the program says is bad input, says the usage error and returns 2", async () => {
      const usageOf = (err: unknown) => (err instanceof BadDialectError ? new UsageError(`--dialect: ${err.message}`) : undefined);
      const { status, errors } = failing(new BadDialectError('no dialect "x"'), usageOf);
      expect(await status).toBe(2);
      expect(errors()).toBe('error: --dialect: no dialect "x"\n');
      const other = failing(new Error('disk full'), usageOf);
      expect(await other.status).toBe(1);
      expect(other.errors()).toBe('error: disk full\n');
    });

    it('on any other failure, says it in one line and returns 1; its stack only with DUPLEX_BENCH_DEBUG', async () => {
      delete process.env.DUPLEX_BENCH_DEBUG;
      const err = new Error('cannot write summary.json');
      const { status, errors } = failing(err);
      expect(await status).toBe(1);
      expect(errors()).toBe('error: cannot write summary.json\n');
      process.env.DUPLEX_BENCH_DEBUG = '1';
      const debug = failing(err);
      expect(await debug.status).toBe(1);
      expect(debug.errors()).toBe(`error: cannot write summary.json\n${err.stack}\n`);
    });

    it('says a thrown value that is not an Error as it is', async () => {
      delete process.env.DUPLEX_BENCH_DEBUG;
      const { status, errors } = failing('socket hang up');
      expect(await status).toBe(1);
      expect(errors()).toBe('error: socket hang up\n');
    });
  });
});

describe('flagsOf', () => {
  it("adds --json to the flags of a command that takes it, and leaves another's as they are", () => {
    const run = command('run', true);
    const merge = command('merge', false);
    expect(Object.keys(flagsOf(run))).toEqual(['url', 'json']);
    expect(flagsOf(run).json).toMatchObject({ kind: 'bool', group: 'output' });
    expect(flagsOf(merge)).toBe(merge.flags);
    expect(Object.keys(run.flags)).toEqual(['url']);
  });
});

describe('processIo', () => {
  it("is the process's own streams, signals and exit, with the arguments given", () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    try {
      const io = processIo(['--url', 'u']);
      expect(io.stdout).toBe(process.stdout);
      expect(io.stderr).toBe(process.stderr);
      expect(io.signals).toBe(process);
      expect(io.argv).toEqual(['--url', 'u']);
      io.exitNow(130);
      expect(exit).toHaveBeenCalledWith(130);
    } finally {
      exit.mockRestore();
    }
  });
});

describe('mainOf', () => {
  const saved = { argv: process.argv, poolSize: Buffer.poolSize, exitCode: process.exitCode };
  afterEach(() => {
    process.argv = saved.argv;
    Buffer.poolSize = saved.poolSize;
    process.exitCode = saved.exitCode;
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it("runs the command of this process's arguments, sets its status as the exit code, and exits 5 s later whatever is left open", async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    let done: (code: number) => void = () => undefined;
    const run = command('run', false, () => new Promise<number>((resolve) => (done = resolve)));
    process.argv = ['/usr/bin/node', '/kit/bin/kit.js', 'run', '--url', 'ws://h'];
    mainOf(program([run]));
    expect(Buffer.poolSize).toBe(BUFFER_POOL_BYTES);
    await new Promise((resolve) => setImmediate(resolve));
    expect(run.calls.map((c) => [c.argv, c.io.argv, c.io.stdout === process.stdout])).toEqual([[['--url', 'ws://h'], ['--url', 'ws://h'], true]]);
    done(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(process.exitCode).toBe(3);
    // Nothing exits before the grace; then the process leaves with the status.
    jest.advanceTimersByTime(4999);
    expect(exit).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(exit).toHaveBeenCalledWith(3);
  });
});
