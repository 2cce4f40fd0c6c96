import { DeadlineScheduler } from './deadline-scheduler';
import { VirtualTime } from './testing';

describe('VirtualTime', () => {
  it('runs timers in due order, with the promise callbacks each one queued between them, until the awaited work is done', async () => {
    const time = new VirtualTime();
    const order: string[] = [];
    const work = (async () => {
      await new Promise<void>((resolve) => time.arm(100, resolve));
      order.push(`a ${Math.round(time.now)}`);
      // Armed only after the first wait resolved: the promise callbacks ran before the next timer.
      await new Promise<void>((resolve) => time.arm(50, resolve));
      order.push(`b ${Math.round(time.now)}`);
      return 'done';
    })();
    time.arm(120, () => order.push('c 120'));
    expect(await time.run(work)).toBe('done');
    expect(order).toEqual(['a 100', 'c 120', 'b 150']);
  });

  it('fails when the work is not done within its limit, or when nothing is left to run', async () => {
    const time = new VirtualTime();
    time.arm(10_000, () => undefined);
    await expect(time.run(new Promise(() => undefined), 5000)).rejects.toThrow('not done within 5000 ms of virtual time');
    await expect(new VirtualTime().run(new Promise(() => undefined))).rejects.toThrow('nothing left to run');
  });

  it('ends a deadline summed in floats (0.1 + 4 × 0.08 s) on its wake, not in endless early wakes', async () => {
    const time = new VirtualTime();
    const scheduler = new DeadlineScheduler({ host: time });
    let fired = 0;
    scheduler.schedule(0.1 + 4 * 0.08, () => fired++);
    await time.advance(1000);
    expect(fired).toBe(1);
    expect(scheduler.stats().early_wakes).toBe(0);
  });
});
