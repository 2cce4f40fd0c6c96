import { helpOf, parseFlags, UsageError, type FlagSpecs } from './flags';

const SPECS = {
  url: { kind: 'string', required: true, group: 'connection', help: 'server endpoint', value: 'URL' },
  concurrency: { kind: 'int', min: 1, default: 4, group: 'load', help: 'sessions' },
  duration: { kind: 'number', min: 0, exclusive: true, group: 'load', help: 'audio per session, seconds', value: 'S' },
  trace: { kind: 'enum', values: ['full', 'off'], default: 'off', group: 'output', help: 'what to trace' },
  quiet: { kind: 'bool', group: 'output', help: 'no progress lines' },
  'no-playback-ack': { kind: 'bool', group: 'testing', help: 'never acknowledge playback' },
  arm: { kind: 'list', group: 'load', help: 'an arm' },
} as const satisfies FlagSpecs;

const usage = (argv: string[]) => {
  try {
    parseFlags(argv, SPECS);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
};

describe('parseFlags', () => {
  it('reads values, defaults, --name=value, bare booleans (a --no- flag too) and positionals', () => {
    const f = parseFlags(['DIR', '--url=ws://h/x', '--duration', '2.5', '--quiet', '--no-playback-ack', 'MORE'], SPECS);
    expect(f).toEqual({ _: ['DIR', 'MORE'], url: 'ws://h/x', concurrency: 4, duration: 2.5, trace: 'off', quiet: true, 'no-playback-ack': true, arm: [] });
    expect(parseFlags(['--url', 'u', '--arm', 'A=--x 1', '--arm=B=--y'], SPECS).arm).toEqual(['A=--x 1', 'B=--y']);
    expect(parseFlags(['--url', 'u'], SPECS)).toMatchObject({ quiet: false, 'no-playback-ack': false, duration: undefined });
  });

  it.each([
    [['--url', 'u', '--bogus'], 'unknown flag --bogus'],
    [['--concurrency', '2'], '--url is required'],
    [['--bogus'], 'unknown flag --bogus'],
    [['--url'], '--url needs a value'],
    [['--url', 'u', '--concurrency', '0'], '--concurrency must be at least 1, got 0'],
    [['--url', 'u', '--concurrency', '1.5'], '--concurrency must be a whole number, got "1.5"'],
    [['--url', 'u', '--duration', '0'], '--duration must be greater than 0, got 0'],
    [['--url', 'u', '--duration', 'x'], '--duration must be a number, got "x"'],
    [['--url', 'u', '--trace', 'some'], '--trace must be one of full|off, got "some"'],
    [['--url', 'u', '--quiet=yes'], '--quiet takes no value'],
  ])('%j: one line naming the flag', (argv, message) => {
    expect(usage(argv)).toBe(message);
  });
});

describe('helpOf', () => {
  it('lists every flag under its group, in the fixed group order, with defaults and the required ones marked', () => {
    const text = helpOf('tool run', SPECS, { summary: 'runs', usage: '--url URL [flags]' });
    expect(text).toMatch(/^Usage: tool run --url URL \[flags\]\n/);
    const groups = ['Connection:', 'Load:', 'Output:', 'Testing and diagnosis:'].map((g) => text.indexOf(`\n${g}\n`));
    expect(groups.every((i) => i > 0)).toBe(true);
    expect([...groups].sort((a, b) => a - b)).toEqual(groups);
    expect(text).toMatch(/--url <URL>\s+server endpoint \(required\)/);
    expect(text).toMatch(/--concurrency <N>\s+sessions \(default: 4\)/);
    expect(text).toMatch(/--trace <full\|off>\s+what to trace \(default: "off"\)/);
  });
});
