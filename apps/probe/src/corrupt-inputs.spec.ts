import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
import { main } from './main';

// Each command that reads a run directory, given a file of it cut short: one line on stderr naming
// the file, 'not valid JSON' with the parser's place and that the file may be cut short; exit 2, as
// for every input given that does not read (BAD_RUN_FILE).

function io(): RunIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, signals: { on: () => undefined, off: () => undefined }, exitNow: () => undefined, argv: [] };
}

describe('a run file cut short, given to each command that reads it', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'corrupt-inputs-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const oneLine = (path: string) => [expect.stringMatching(new RegExp(`^error: ${path}: not valid JSON \\(.+\\); the file may be cut short\\n$`))];

  it.each([
    ['report', 'summary.json', (d: string) => ['report', d]],
    ['merge', 'summary.json', (d: string) => ['merge', d, '--output', join(d, 'merged')]],
    ['check', 'run.json', (d: string) => ['check', d]],
    ['compare', 'compare.json', (d: string) => ['compare', '--arm', 'A=--url ws://127.0.0.1:9/v1', '--arm', 'B=--url ws://127.0.0.1:9/v2', '--output', d]],
    ['sweep', 'sweep.json', (d: string) => ['sweep', '--url', 'ws://127.0.0.1:9/v1', '--sessions', '1:2', '--output', d]],
  ])('%s names %s', async (_command, file, argv) => {
    await mkdir(join(dir, 'sessions', 's0'), { recursive: true });
    await writeFile(join(dir, 'sessions', 's0', 'trace.jsonl'), '');
    await writeFile(join(dir, 'samples.msgpack'), '');
    await writeFile(join(dir, file), '{"kind":"ht');
    const given = io();
    expect(await main(argv(dir), given)).toBe(2);
    expect(given.err).toEqual(oneLine(join(dir, file)));
  });
});
