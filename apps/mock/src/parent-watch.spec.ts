import { VirtualTimeScheduler } from 'rxjs';
import { schedulerTimerHost, type TimerHost } from '@duplex-bench/pacer';
import { PARENT_POLL_MS, watchParent } from './parent-watch';

/** The watch in virtual time, against a parent id the test changes; flushed up to `until_ms`. */
function watch(change_at_ms: number | null, until_ms = 10_000, cancel_at_ms?: number) {
  const scheduler = new VirtualTimeScheduler(undefined, until_ms);
  let ppid = 4242;
  if (change_at_ms !== null) scheduler.schedule(() => (ppid = 1), change_at_ms);
  const base = schedulerTimerHost(scheduler);
  const background: boolean[] = [];
  const timers: TimerHost = { ...base, arm: (ms, fn, o) => (background.push(o?.background === true), base.arm(ms, fn, o)) };
  const gone: number[] = [];
  const cancel = watchParent(() => gone.push(scheduler.now()), timers, () => ppid);
  if (cancel_at_ms !== undefined) scheduler.schedule(cancel, cancel_at_ms);
  scheduler.flush();
  return { gone, background };
}

describe('watchParent', () => {
  it('says the parent is gone once, within one poll of its id changing, and stops looking', () => {
    const { gone, background } = watch(1_000);
    expect(gone).toEqual([1_000]);
    expect(watch(1_050).gone).toEqual([1_000 + PARENT_POLL_MS]);
    // One timer per look up to the change, none after it.
    expect(background).toHaveLength(1_000 / PARENT_POLL_MS);
  });

  it('says nothing while the parent stays, on background timers only (the watch never keeps a process alive)', () => {
    const { gone, background } = watch(null, 10_000);
    expect(gone).toEqual([]);
    expect(background.length).toBeGreaterThan(10);
    expect(background.every((b) => b)).toBe(true);
  });

  it('stops looking once cancelled', () => {
    expect(watch(1_000, 10_000, 500).gone).toEqual([]);
  });
});
