import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTurns } from './conversation-files';
import { ResultsInputError } from './input-error';
import { readRunForMerge } from './merge-runs';

describe('ResultsInputError', () => {
  it('is an Error that carries its code and names itself', () => {
    const err = new ResultsInputError('BAD_RUN_FILE', '/runs/a/turns.jsonl line 3: Unexpected token');
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'ResultsInputError', code: 'BAD_RUN_FILE', message: '/runs/a/turns.jsonl line 3: Unexpected token' });
    expect(String(err)).toBe('ResultsInputError: /runs/a/turns.jsonl line 3: Unexpected token');
  });
});

describe('the codes, as reading a run back meets each case', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'results-input-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const rejection = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

  it('NO_SAMPLES: a run directory to merge that holds no samples.msgpack, named with why', async () => {
    const err = await rejection(readRunForMerge(dir));
    expect(err).toBeInstanceOf(ResultsInputError);
    expect(err).toMatchObject({ code: 'NO_SAMPLES', message: `${dir}: no samples.msgpack (ENOENT)` });
  });

  it('BAD_RUN_FILE: a samples.msgpack that is there but does not decode', async () => {
    await writeFile(join(dir, 'samples.msgpack'), Buffer.from([0xc1, 0xc1, 0xc1]));
    expect(await rejection(readRunForMerge(dir))).toMatchObject({ name: 'ResultsInputError', code: 'BAD_RUN_FILE', message: expect.stringMatching(new RegExp(`^${dir}/samples\\.msgpack: not valid msgpack \\(.+\\); the file may be cut short$`)) });
  });

  it('BAD_RUN_FILE: a line of turns.jsonl that does not parse, by its number', async () => {
    await writeFile(join(dir, 'turns.jsonl'), '{"session":"s0"}\n{"session":\n');
    expect(await rejection(readTurns(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(new RegExp(`^${join(dir, 'turns.jsonl')}: line 2: not valid JSON \\(.+\\); the file may be cut short$`)) });
  });
});
