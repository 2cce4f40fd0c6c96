import { ManualTimers } from '@duplex-bench/pacer/testing';
import { ReadBurst } from './read-burst';

describe('ReadBurst', () => {
  it('says so for every read that ends past the bound after the first of its poll phase began', () => {
    const timers = new ManualTimers();
    const reads = new ReadBurst(timers, 0.02);
    const said: boolean[] = [];
    // Reads of 3 ms each, back to back in one poll phase: past 20 ms at the seventh read's end (21 ms), and after.
    for (let i = 0; i < 8; i++) {
      reads.begin();
      timers.now += 3;
      said.push(reads.over());
    }
    expect(said).toEqual([false, false, false, false, false, false, true, true]);
  });

  it('opens a new burst once pending I/O has had its turn (the poll phase ended)', () => {
    const timers = new ManualTimers();
    const reads = new ReadBurst(timers, 0.02);
    reads.begin();
    timers.now += 19;
    expect(reads.over()).toBe(false);
    // The poll phase ends: its afterIo runs (19 ms after it was asked for), the burst closes.
    expect(timers.pending).toHaveLength(1);
    timers.fire(19);
    reads.begin();
    timers.now += 10;
    expect(reads.over()).toBe(false);
    // The same phase goes on: 10 + 11 ms.
    reads.begin();
    timers.now += 11;
    expect(reads.over()).toBe(true);
  });

  it('holds back only a full read (64 KiB: more is waiting, a flood) once the burst is past the bound', () => {
    const timers = new ManualTimers();
    const reads = new ReadBurst(timers, 0.02);
    reads.begin();
    timers.now += 30;
    expect([reads.holds(8 * 1024), reads.holds(65_535), reads.holds(65_536)]).toEqual([false, false, true]);
    // Within the bound even a full read goes on.
    timers.fire(30);
    reads.begin();
    timers.now += 5;
    expect(reads.holds(65_536)).toBe(false);
  });

  it('calls a paused reader back on a timer of its own, and counts the pauses', () => {
    const timers = new ManualTimers();
    const reads = new ReadBurst(timers, 0.02);
    let resumed = 0;
    reads.later(() => resumed++);
    expect(reads.paused).toBe(1);
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([0]);
    timers.fire();
    expect(resumed).toBe(1);
  });
});
