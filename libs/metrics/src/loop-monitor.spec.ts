import { ManualTimers } from '@duplex-bench/pacer/testing';
import { LoopLagMonitor } from './loop-monitor';
import { Timeline } from './timeline';

describe('LoopLagMonitor', () => {
  it('records each wake\'s lateness past its interval, counts those over 80 ms, and keeps no process alive', () => {
    const timers = new ManualTimers();
    const lags: Array<[number, number]> = [];
    const monitor = new LoopLagMonitor(10, timers, (t_s, ms) => lags.push([t_s, ms])).start();
    expect(timers.pending).toEqual([expect.objectContaining({ due_ms: 10, background: true })]);
    timers.fire(0);
    timers.fire(95); // a stall: this wake came 95 ms late
    timers.fire(2);
    expect(lags.map(([t, ms]) => [Math.round(t * 1000), Math.round(ms)])).toEqual([
      [10, 0],
      [115, 95],
      [127, 2],
    ]);
    const f = monitor.figures();
    expect(f.over_80ms).toBe(1);
    expect(f.samples).toBe(3);
    expect(f.max).toBeCloseTo(95, 0);
    monitor.stop();
    expect(timers.pending).toHaveLength(0);
  });
});

describe('Timeline', () => {
  it('samples the backlog at each bin\'s end into the bin that ended, and bins loop lag by time', () => {
    const timers = new ManualTimers();
    let backlog = 1000;
    const timeline = new Timeline(0.5, timers).start();
    timeline.watchBacklog(() => backlog);
    timers.fire(0); // end of bin 0 (t = 0.5 s)
    backlog = 5000;
    timeline.loopLag(0.7, 12);
    timers.fire(0); // end of bin 1 (t = 1.0 s)
    timeline.stop();
    expect(timers.pending).toHaveLength(0);
    const file = timeline.toFile();
    expect(file.trace_backlog_bytes).toEqual([1000, 5000]);
    expect(file.loop_lag_max_ms).toEqual([0, 12]);
  });
});
