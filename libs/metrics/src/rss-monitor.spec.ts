import { ManualTimers } from '@duplex-bench/pacer/testing';
import { RssMonitor } from './rss-monitor';

const MIB = 2 ** 20;

describe('RssMonitor', () => {
  it('fits the growth after the warm-up only, in MiB per minute, through a garbage collector sawtooth', () => {
    const timers = new ManualTimers();
    let rss = 100 * MIB;
    const monitor = new RssMonitor(60, 1000, timers, () => rss).start();
    // The first minute climbs 50 MiB (the warm-up); then 0.5 MiB per minute under a ±4 MiB sawtooth.
    for (let s = 1; s <= 660; s++) {
      rss = s <= 60 ? (100 + (50 * s) / 60) * MIB : (150 + (0.5 * (s - 60)) / 60 + (s % 20 < 10 ? 4 : -4)) * MIB;
      timers.fire();
    }
    const f = monitor.figures();
    expect(f.samples).toBe(601);
    expect(f.span_s).toBe(600);
    expect(f.growth_mib_per_min).toBeGreaterThan(0.45);
    expect(f.growth_mib_per_min).toBeLessThan(0.55);
    expect(f.peak_mib).toBeCloseTo(159, 0);
  });

  it('tells a rise that levels off from growth that goes on: the slope of the second half', () => {
    const run = (rise: (s: number) => number) => {
      const timers = new ManualTimers();
      let rss = 100 * MIB;
      const monitor = new RssMonitor(60, 1000, timers, () => rss).start();
      for (let s = 1; s <= 660; s++) {
        rss = (100 + rise(s) + (s % 20 < 10 ? 3 : -3)) * MIB;
        timers.fire();
      }
      return monitor.figures();
    };
    // 40 MiB more over minutes 1-3, then flat: the whole window's slope sees it, the second half does not.
    const settles = run((s) => (s <= 60 ? 0 : Math.min(40, ((s - 60) * 40) / 120)));
    expect(settles.growth_mib_per_min).toBeGreaterThan(1.5);
    expect(Math.abs(settles.late_growth_mib_per_min as number)).toBeLessThan(0.25);
    // The second half is the bins from the one at the midpoint (300 s after the first sample at 60 s).
    expect(settles.late_from_s).toBe(360);
    // 2 MiB per minute all along: both slopes say so.
    const leaks = run((s) => (2 * s) / 60);
    // (the ±3 MiB sawtooth moves a 5-minute slope by about 0.1)
    for (const g of [leaks.growth_mib_per_min, leaks.late_growth_mib_per_min]) expect(Math.abs((g as number) - 2)).toBeLessThan(0.25);
  });

  it('tells memory that follows the most in flight from memory that grows while that high-water mark holds', () => {
    const run = (leak_mib_per_min: number) => {
      const timers = new ManualTimers();
      let rss = 100 * MIB;
      let load = 0;
      const monitor = new RssMonitor(60, 1000, timers, () => rss).start();
      monitor.watchLoad(() => load);
      let peak = 0;
      for (let s = 1; s <= 660; s++) {
        // 300 in flight, a wander to 330 over 140-160 s and back: 0.25 MiB kept per session of the high-water mark.
        load = s < 60 ? 5 * s : s >= 140 && s < 160 ? 330 : 300;
        peak = Math.max(peak, load);
        rss = (100 + 0.25 * peak + (leak_mib_per_min * s) / 60 + (s % 20 < 10 ? 2 : -2)) * MIB;
        timers.fire();
      }
      return monitor.figures();
    };
    const follows = run(0);
    expect(follows.in_flight_peak_at_from).toBe(300);
    expect(follows.in_flight_peak).toBe(330);
    // The peak last rose at 140 s, 80 s after the first counted sample: the held slope counts from the next 10 s bin.
    expect(follows.held_from_s).toBe(150);
    // The 7.5 MiB step shows in the whole slope (about 0.4 MiB/min), not in the held one.
    expect(follows.growth_mib_per_min).toBeGreaterThan(0.3);
    expect(Math.abs(follows.held_growth_mib_per_min as number)).toBeLessThan(0.1);
    const leaks = run(1);
    expect(Math.abs((leaks.held_growth_mib_per_min as number) - 1)).toBeLessThan(0.1);
    // No load watched: no such figures.
    expect(new RssMonitor(0, 1000, new ManualTimers(), () => MIB).figures()).not.toHaveProperty('in_flight_peak');
  });

  it('leaves out the samples taken before the steady start it is told of later (countFrom)', () => {
    const timers = new ManualTimers();
    let rss = 20 * MIB;
    const monitor = new RssMonitor(0, 1000, timers, () => rss).start();
    rss = 100 * MIB;
    timers.fire();
    monitor.countFrom(timers.now_s() + 5);
    for (let s = 0; s < 60; s++) timers.fire();
    // Flat at 100 MiB from the steady start: the 20 MiB of the start-up is no growth.
    expect(monitor.figures().growth_mib_per_min).toBeCloseTo(0, 6);
    expect(monitor.figures().samples).toBe(56);
  });

  it('leaves out the samples after the load ends (countUntil): the drain that follows frees memory, it is no shrinking', () => {
    const timers = new ManualTimers();
    let rss = 100 * MIB;
    const monitor = new RssMonitor(0, 1000, timers, () => rss).start();
    monitor.countUntil(60);
    for (let s = 1; s <= 120; s++) {
      rss = (s <= 60 ? 100 + s / 60 : 100 - (s - 60)) * MIB;
      timers.fire();
    }
    expect(monitor.figures().growth_mib_per_min).toBeCloseTo(1, 3);
    expect(monitor.figures()).toMatchObject({ samples: 61, until_s: 60 });
  });

  it('says no growth (null) over less than 10 s of samples, rather than a slope of one collection', () => {
    const timers = new ManualTimers();
    let rss = 100 * MIB;
    const monitor = new RssMonitor(0, 1000, timers, () => rss).start();
    for (let s = 1; s <= 5; s++) {
      rss += 10 * MIB;
      timers.fire();
    }
    expect(monitor.figures().growth_mib_per_min).toBeNull();
    expect(monitor.figures().late_growth_mib_per_min).toBeNull();
    expect(monitor.figures().now_mib).toBe(150);
    monitor.stop();
    expect(timers.pending).toHaveLength(0);
  });
});
