import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Checkpoint } from './checkpoint';

describe('Checkpoint', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'checkpoint-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const read = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as unknown;

  it('writes the snapshot whole, through a temporary name that is gone afterwards', async () => {
    const path = join(dir, 'run.json');
    const c = new Checkpoint(path, () => ({ recorded: 3 }));
    await c.final();
    expect(await read(path)).toEqual({ recorded: 3 });
    expect(await readdir(dir)).toEqual(['run.json']);
    expect(c.writes).toBe(1);
  });

  it('collapses asks made while a write is in flight into one more write, of the snapshot as it is then', async () => {
    const path = join(dir, 'run.json');
    let state = 0;
    const taken: number[] = [];
    const c = new Checkpoint(path, () => {
      taken.push(state);
      return { state };
    });
    c.ask(); // writes state 0 now
    state = 1;
    c.ask();
    state = 2;
    c.ask();
    state = 3;
    c.ask();
    // One write in flight, one more owed: final waits for both, then writes its own.
    await c.final();
    expect(c.writes).toBe(3);
    // The owed write took the state at its start, after every ask; none of 1 and 2 was written.
    expect(taken).toEqual([0, 3, 3]);
    expect(await read(path)).toEqual({ state: 3 });
  });

  it('asks made after a write ended each write again', async () => {
    const path = join(dir, 'run.json');
    let n = 0;
    const c = new Checkpoint(path, () => ({ n: ++n }));
    c.ask();
    await c.final();
    c.ask();
    await c.final();
    expect(c.writes).toBe(4);
    expect(await read(path)).toEqual({ n: 4 });
  });

  it('final fails with the write error, naming the file, when the file cannot be written', async () => {
    const path = join(dir, 'missing', 'run.json');
    const c = new Checkpoint(path, () => ({}));
    await expect(c.final()).rejects.toThrow(new RegExp(`^${path}: cannot write it: ENOENT`));
  });

  it('an asked-for write that fails is held, not an unhandled rejection; final then names the file', async () => {
    const path = join(dir, 'missing', 'run.json');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const c = new Checkpoint(path, () => ({}));
      c.ask();
      for (let i = 0; i < 200 && c.failed === null; i++) await new Promise((r) => setTimeout(r, 5));
      // Past the turn in which Node reports a rejection nobody handled.
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      expect(c.failed?.message).toMatch(new RegExp(`^${path}: cannot write it: ENOENT`));
      await expect(c.final()).rejects.toThrow(new RegExp(`^${path}: cannot write it: ENOENT`));
      // A later write that succeeds clears it.
      await mkdir(join(dir, 'missing'));
      await c.final();
      expect(c.failed).toBeNull();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
