import fs from 'node:fs';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareStall } from './inject-stall';

/** A clock that moves `step_s` on each read (the stall's own loop is all that reads it), calling `onRead` first. */
function steppingClock(step_s: number, onRead: (reads: number) => void = () => undefined) {
  const c = {
    reads: 0,
    now_s: () => {
      onRead(c.reads);
      return c.reads++ * step_s;
    },
  };
  return c;
}

describe('prepareStall', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'inject-stall-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('busy: spins on the clock it was given until `ms` have passed on it, and no longer', () => {
    const clock = steppingClock(0.25);
    const stall = prepareStall('busy', clock, dir);
    expect(clock.reads).toBe(0);
    stall(1000);
    // One read to set the end (0 s), then 0.25, 0.5, 0.75 and 1 s: at 1 s it is over.
    expect(clock.reads).toBe(5);
    stall(0);
    expect(clock.reads).toBe(7);
  });

  it('disk: writes flushed blocks to a scratch file in `dir` until the time is up, then removes it', () => {
    const file = join(dir, `.stall-${process.pid}.bin`);
    const sizes: number[] = [];
    // Reads: the end, then one before each write; the file's size at each read shows the writes so far.
    const clock = steppingClock(0.25, (n) => {
      if (n > 0) sizes.push(statSync(file).size);
    });
    const fsync = jest.spyOn(fs, 'fsyncSync');
    let flushes: number;
    try {
      prepareStall('disk', clock, dir)(750);
    } finally {
      flushes = fsync.mock.calls.length;
      fsync.mockRestore();
    }
    expect(sizes).toEqual([0, 256 << 10, 512 << 10]);
    // Each block flushed to the device before the next: the loop waits on the disk, not on copying.
    expect(flushes).toBe(2);
    expect(existsSync(file)).toBe(false);
  });

  it('disk: removes its scratch file even when the stall fails part-way', async () => {
    let reads = 0;
    const clock = {
      now_s: () => {
        reads++;
        // The second read is inside the loop, after the file was opened.
        if (reads === 2) throw new Error('clock failed');
        return 0;
      },
    };
    expect(() => prepareStall('disk', clock, dir)(10)).toThrow('clock failed');
    expect(await readdir(dir)).toEqual([]);
  });
});
