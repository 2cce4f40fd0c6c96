import type { RssFigures } from '@duplex-bench/metrics';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import { mibPerMin, Progress, rssLive, type ProgressFigures } from './progress';

const rss = (now_mib: number | null, growth_mib_per_min: number | null): RssFigures => ({
  now_mib,
  peak_mib: now_mib,
  growth_mib_per_min,
  late_growth_mib_per_min: null,
  late_from_s: null,
  samples: 0,
  span_s: 0,
  from_s: 0,
  until_s: null,
});

describe('mibPerMin', () => {
  it('signs a growth and gives it to two decimals', () => {
    expect(mibPerMin(0.314)).toBe('+0.31 MiB/min');
    expect(mibPerMin(0)).toBe('+0.00 MiB/min');
    expect(mibPerMin(-1.5)).toBe('-1.50 MiB/min');
  });
});

describe('rssLive', () => {
  it('is nothing before a sample, the MiB alone before a slope, then the growth beside it', () => {
    expect(rssLive(undefined)).toBe('');
    expect(rssLive(rss(null, 0.5))).toBe('');
    expect(rssLive(rss(211.6, null))).toBe(' | RSS 212 MiB');
    expect(rssLive(rss(211.6, 0.314))).toBe(' | RSS 212 MiB, +0.31 MiB/min');
  });
});

describe('Progress', () => {
  let timers: ManualTimers;
  let written: string[];
  let figures: ProgressFigures;
  let reads: number;
  const read = () => {
    reads++;
    return figures;
  };
  const terminal = { isTTY: true, write: (s: string) => written.push(s) };

  beforeEach(() => {
    timers = new ManualTimers();
    timers.now = 5_000;
    written = [];
    reads = 0;
    figures = { active: 3, sent: 120, late: 0, loop_max_ms: null };
  });

  it('redraws one line each second on a terminal, from the figures read then and the seconds since start', () => {
    const progress = new Progress(terminal, false, timers);
    progress.start(read);
    expect(written).toEqual([]);
    expect(reads).toBe(0);
    // A monitor's timer: it alone must not keep the process alive.
    expect(timers.pending).toEqual([expect.objectContaining({ delay_ms: 1000, background: true })]);
    timers.fire();
    expect(written).toEqual(['\r\x1b[K1 s | 3 sessions streaming | 120 packets sent | 0 late | client loop lag max -']);
    figures = { active: 2, sent: 250, late: 4, loop_max_ms: 12.34, rss: rss(211.6, 0.314) };
    timers.fire();
    expect(written[1]).toBe('\r\x1b[K2 s | 2 sessions streaming | 250 packets sent | 4 late | client loop lag max 12.3 ms | RSS 212 MiB, +0.31 MiB/min');
    expect(reads).toBe(2);
    progress.stop();
  });

  it('counts the seconds on its clock: a redraw that comes late says so', () => {
    const progress = new Progress(terminal, false, timers);
    progress.start(read);
    timers.fire(2_600);
    expect(written[0].slice(0, 10)).toBe('\r\x1b[K4 s | ');
    progress.stop();
  });

  it('writes nothing and arms nothing with --quiet, or off a terminal', () => {
    for (const [out, quiet] of [
      [terminal, true],
      [{ isTTY: false, write: (s: string) => written.push(s) }, false],
      [{ write: (s: string) => written.push(s) }, false],
    ] as const) {
      const progress = new Progress(out, quiet, timers);
      progress.start(read);
      expect(timers.pending).toEqual([]);
      progress.stop();
    }
    expect(written).toEqual([]);
    expect(reads).toBe(0);
  });

  it('stop() disarms the redraw and clears the line it drew, once', () => {
    const progress = new Progress(terminal, false, timers);
    progress.start(read);
    timers.fire();
    progress.stop();
    expect(timers.pending).toEqual([]);
    expect(written).toHaveLength(2);
    expect(written[1]).toBe('\r\x1b[K');
    progress.stop();
    expect(written).toHaveLength(2);
    expect(reads).toBe(1);
  });

  it('stop() before the first redraw clears nothing', () => {
    const progress = new Progress(terminal, false, timers);
    progress.start(read);
    progress.stop();
    expect(timers.pending).toEqual([]);
    expect(written).toEqual([]);
  });
});
