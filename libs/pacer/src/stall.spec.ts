import { DeadlineScheduler } from './deadline-scheduler';
import { scheduleStall } from './stall';
import { VirtualTime } from './testing';

describe('scheduleStall', () => {
  it('holds the loop half a millisecond before the packet slot nearest the middle, for the stall asked', async () => {
    const time = new VirtualTime();
    const scheduler = new DeadlineScheduler({ host: time });
    const held: Array<[number, number]> = [];
    // Origin 1 s, the middle 2.01 s: slot 25 of 80 ms (2.0 s), held from 1 + 1.9995 s.
    scheduleStall(scheduler, time, 1, 2.01, 80, 150, (ms) => held.push([time.now, ms]));
    await time.advance(4000);
    expect(held).toHaveLength(1);
    // Its deadline is 2,999.5 ms; timers wake in whole ms, so it holds from the slot's own tick at the latest.
    expect(held[0][0]).toBeGreaterThanOrEqual(2999.5);
    expect(held[0][0]).toBeLessThanOrEqual(3000.001);
    expect(held[0][1]).toBe(150);
  });

  it('by default spins on the clock until the stall is over', () => {
    let now = 0;
    const clock = { now_s: () => (now += 0.01) };
    let due: (() => void) | null = null;
    scheduleStall({ schedule: (_: number, fn: () => void) => (due = fn) } as unknown as DeadlineScheduler, clock, 0, 0, 80, 50);
    (due as unknown as () => void)();
    // Read every 10 ms of this clock: the spin ends once 50 ms passed.
    expect(now).toBeGreaterThanOrEqual(0.06);
  });
});
