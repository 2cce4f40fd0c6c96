import { ManualTimers } from '@duplex-bench/pacer/testing';
import { Timeline } from './timeline';

/** process.cpuUsage driven by the test: `total` is the CPU used so far, µs. */
function fakeCpu() {
  const total = { user: 0, system: 0 };
  const spy = jest.spyOn(process, 'cpuUsage').mockImplementation((prev?: NodeJS.CpuUsage) => ({ user: total.user - (prev?.user ?? 0), system: total.system - (prev?.system ?? 0) }));
  return { total, restore: () => spy.mockRestore() };
}

describe('Timeline', () => {
  let cpu: ReturnType<typeof fakeCpu>;
  beforeEach(() => {
    cpu = fakeCpu();
  });
  afterEach(() => {
    cpu.restore();
  });

  it('starts its bins at the clock’s time when made, and puts a measure from before it in the first bin', () => {
    const timers = new ManualTimers();
    timers.now = 2000;
    const timeline = new Timeline(0.5, timers);
    expect(timeline.origin_s).toBe(2);
    timeline.loopLag(1.5, 7);
    timeline.loopLag(2.49, 3);
    timeline.loopLag(2.5, 4);
    expect(timeline.toFile()).toMatchObject({ format: 'duplex-bench.timeline', version: 1, bin_s: 0.5, origin_s: 2, loop_lag_max_ms: [7, 4] });
  });

  it('keeps the longest loop lag of each bin, and the sum and the longest of the GC pauses that started in it', () => {
    const timeline = new Timeline(1, new ManualTimers());
    timeline.loopLag(0.2, 5);
    timeline.loopLag(0.9, 11);
    timeline.loopLag(0.95, 2);
    timeline.gcPause(0.1, 3);
    timeline.gcPause(0.5, 4.25);
    timeline.gcPause(2.2, 1);
    const file = timeline.toFile();
    expect(file.loop_lag_max_ms).toEqual([11, 0, 0]);
    expect(file.gc_pause_total_ms).toEqual([7.25, 0, 1]);
    expect(file.gc_pause_max_ms).toEqual([4.25, 0, 1]);
    // Every series as long as the longest, zeros where nothing was measured.
    expect(file.cpu_cores).toEqual([0, 0, 0]);
    expect(file.trace_backlog_bytes).toEqual([0, 0, 0]);
  });

  it('samples CPU per wall second at each bin’s end into the bin that ended, a late wake included', () => {
    const timers = new ManualTimers();
    const timeline = new Timeline(0.5, timers).start();
    cpu.total.user = 200_000;
    cpu.total.system = 50_000;
    timers.fire(0); // t = 0.5 s: 0.25 CPU s in 0.5 s
    cpu.total.user += 330_000;
    timers.fire(100); // due at 1.0 s, wakes at 1.1 s: 0.33 CPU s in 0.6 s, still bin 1
    timeline.stop();
    expect(timeline.toFile().cpu_cores).toEqual([0.5, 0.55]);
  });

  it('re-arms one background timer per bin until stopped', () => {
    const timers = new ManualTimers();
    const timeline = new Timeline(0.25, timers).start();
    expect(timers.pending).toEqual([expect.objectContaining({ delay_ms: 250, background: true })]);
    timers.fire();
    timers.fire();
    expect(timers.pending).toEqual([expect.objectContaining({ due_ms: 750 })]);
    timeline.stop();
    expect(timers.pending).toEqual([]);
    timeline.stop();
  });

  it('gives sessions in flight and resident memory only when watched, each with its origin', () => {
    const timers = new ManualTimers();
    const plain = new Timeline(0.5, timers).toFile();
    expect(plain).not.toHaveProperty('active_sessions');
    expect(plain).not.toHaveProperty('rss_mib');
    expect(Object.keys(plain.measurement_origin).sort()).toEqual(['cpu_cores', 'gc_pause_total_ms', 'loop_lag_max_ms', 'trace_backlog_bytes']);

    const timeline = new Timeline(0.5, timers).start();
    let active = 3;
    let rss: number | null = null;
    timeline.watchActive(() => active);
    timeline.watchRss(() => rss);
    // Within bin 0 the count rose to 7 and fell back to 3 before its end: the bin keeps 7.
    timeline.activeSessions(0.1, 7);
    timers.fire(); // end of bin 0: no RSS sample yet
    rss = 81.5;
    active = 2;
    timers.fire(); // end of bin 1
    timeline.stop();
    const file = timeline.toFile();
    expect(file.active_sessions).toEqual([7, 2]);
    expect(file.rss_mib).toEqual([0, 81.5]);
    expect(file.measurement_origin).toHaveProperty('active_sessions');
    expect(file.measurement_origin).toHaveProperty('rss_mib');
  });

  it('counts the stamped frames read in each bin, those read more than 5 ms after their stamp, and the longest delay; none without a stamp', () => {
    const plain = new Timeline(0.5, new ManualTimers()).toFile();
    expect(plain).not.toHaveProperty('receive_delay_frames');
    expect(plain.measurement_origin).not.toHaveProperty('receive_delay_max_ms');

    const timeline = new Timeline(0.5, new ManualTimers());
    timeline.receiveDelay(0.1, 0.4);
    timeline.receiveDelay(0.2, 5);
    timeline.receiveDelay(0.3, 5.01);
    timeline.receiveDelay(1.2, 12.5);
    const file = timeline.toFile();
    expect(file.receive_delay_frames).toEqual([3, 0, 1]);
    expect(file.receive_delay_over_5ms).toEqual([1, 0, 1]);
    expect(file.receive_delay_max_ms).toEqual([5.01, 0, 12.5]);
    expect(file.loop_lag_max_ms).toHaveLength(3);
    expect(Object.keys(file.measurement_origin)).toEqual(expect.arrayContaining(['receive_delay_frames', 'receive_delay_over_5ms', 'receive_delay_max_ms']));
  });

  it('reads the backlog through the reader given at construction, or the one watched later', () => {
    const timers = new ManualTimers();
    const timeline = new Timeline(0.5, timers, () => 4096).start();
    timers.fire();
    timeline.watchBacklog(() => 10);
    timers.fire();
    timeline.stop();
    expect(timeline.toFile().trace_backlog_bytes).toEqual([4096, 10]);
  });

  it('rounds every figure to three decimals', () => {
    const timeline = new Timeline(1, new ManualTimers());
    timeline.loopLag(0, 1.23456);
    timeline.gcPause(0, 0.0004);
    expect(timeline.toFile()).toMatchObject({ loop_lag_max_ms: [1.235], gc_pause_total_ms: [0], gc_pause_max_ms: [0] });
  });
});
