import { Subject } from 'rxjs';
import { pcmPackets } from '@duplex-bench/audio';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import type { SessionResult } from '@duplex-bench/session';
import type { TraceWriterStats } from '@duplex-bench/tracer';
import { ProcessMeasures } from './process-measures';

const TRACE: TraceWriterStats = { batches: 2, bytes_written: 300, backlog_peak_bytes: 120, max_batch_write_ms: 1, high_water_crossings: 0 };

const result = (id: string, completed = true): SessionResult => ({ id, completed, ...(completed ? {} : { reason: 'server_closed' as const }), violation: false, packets_sent: 2, late: 0, server_errors: 0 });

/** A packet of a session whose packet 0 started at 10 s, sent `late_ms` after its slot. */
const packet = (seq: number, late_ms: number) => {
  const scheduled_s = 10 + seq * 0.08;
  const start_s = scheduled_s + late_ms / 1000;
  return { seq, scheduled_s, start_s, completed_s: start_s + 0.002, send_ms: 0.3, buffered_bytes: 0 };
};

/** What a run adds to the context of its sessions. */
const own = (): Parameters<ProcessMeasures['sessionContext']>[0] => ({
  url: 'ws://h',
  dialect: { protocol: 'native' },
  packets: pcmPackets(Buffer.alloc(2560), 80, 16000),
  connect_timeout_ms: 3000,
  drain_timeout_ms: 5000,
  output_sample_rate: 24000,
  stop$: new Subject<void>(),
});

describe('ProcessMeasures', () => {
  let time: VirtualTime;
  let measures: ProcessMeasures;
  beforeEach(() => {
    time = new VirtualTime();
    time.now = 5_000;
    measures = new ProcessMeasures(80, time);
  });
  afterEach(() => measures.stop());

  it("hands every session the process's clock, scheduler and recorders, with what the run adds", () => {
    const ctx = measures.sessionContext(own());
    expect(ctx).toMatchObject({ url: 'ws://h', output_sample_rate: 24000, connect_timeout_ms: 3000, drain_timeout_ms: 5000 });
    expect(ctx.clock).toBe(time);
    expect(ctx.scheduler).toBe(measures.scheduler);
    expect(ctx.pacing).toBe(measures.pacing);
    expect(ctx.samples).toBe(measures.samples);
    expect(ctx.units).toBe(measures.units);
    expect(ctx.unknownEvents).toBe(measures.unknownEvents);
  });

  it('counts the streams open at once through the context, and keeps the peak', () => {
    const ctx = measures.sessionContext(own());
    ctx.onStreamStart();
    ctx.onStreamStart();
    ctx.onStreamEnd();
    ctx.onStreamStart();
    ctx.onStreamStart();
    ctx.onStreamEnd();
    expect(measures.overlap).toMatchObject({ opened: 4, active: 2, peak: 3 });
  });

  it('measures its loop on the clock it was given: among 200 wakes on time, one 100 ms late is the max and one lag over 80 ms in load.client_loop', async () => {
    // To 7.005 s: the timeline's and RSS's timers due at 7 s have fired, the loop's next wake (7.01 s) is the first due.
    await time.advance(2005);
    time.fire(100);
    await time.advance(5);
    expect(measures.clientLoop()).toEqual({ max_lag_ms: expect.closeTo(100, 1), lags_over_80ms: 1 });
    expect(measures.loop.stalls).toEqual([{ end_s: expect.closeTo(7.11, 3), ms: expect.closeTo(100, 1) }]);
  });

  it('stops every monitor it started: no timer is left armed', async () => {
    expect(time.pending.length).toBeGreaterThan(0);
    measures.stop();
    expect(time.pending).toEqual([]);
  });

  it('summarises the sessions with its own pacing, the streams, the unknown events and the trace', () => {
    measures.pacing.record(packet(0, 0), 10);
    measures.pacing.record(packet(1, 3), 10);
    measures.overlap.open();
    measures.unknownEvents.set('x.event', 2);
    const s = measures.summary([result('a'), result('b', false)], { interrupted: false, trace: TRACE, warmup_s: 0, duration_s: 2 });
    expect(s).toMatchObject({
      qualified: true,
      interrupted: false,
      sessions: { started: 2, completed: 1, incomplete: 1, incomplete_reasons: { server_closed: 1 } },
      packets: { sent: 2, late: 0 },
      peak_overlapping_streams: 1,
      events: { unknown: { 'x.event': 2 } },
      trace_backlog_peak_bytes: 120,
      packet_ms: 80,
      duration_s: 2,
    });
    expect(s.pacing_deviation_ms.max).toBeCloseTo(3, 1);
    expect(s).not.toHaveProperty('pacing');
    // No unit was granted: no unit figures.
    expect(s).not.toHaveProperty('unit_lag_ms');
  });

  it("with a warm-up, adds the steady deviation of the packets sent from steadyFrom's instant", () => {
    measures.steadyFrom(10.1);
    measures.pacing.record(packet(0, 0), 10);
    measures.pacing.record(packet(1, 40), 10); // 10.12 s: warm-up over
    measures.pacing.record(packet(2, 2), 10);
    const s = measures.summary([result('a')], { interrupted: false, trace: TRACE, warmup_s: 0.1, duration_s: 1 });
    expect(s.pacing_deviation_ms.count).toBe(3);
    expect(s.pacing_deviation_steady_ms?.count).toBe(2);
    expect(measures.summary([result('a')], { interrupted: false, trace: TRACE, warmup_s: 0, duration_s: 1 })).not.toHaveProperty('pacing_deviation_steady_ms');
  });

  it("takes the pacing given in place of its own (a resumed recording's), and the pacing mode", () => {
    measures.pacing.record(packet(0, 0), 10);
    const pacing = { ...measures.pacing.figures(), packets: { sent: 40, late: 3 } };
    const s = measures.summary([result('a')], { interrupted: false, trace: TRACE, warmup_s: 0, duration_s: 1, pacing });
    expect(s.packets).toEqual({ sent: 40, late: 3 });
    expect(s.qualified).toBe(false);
    const lockstep = measures.summary([result('a')], { interrupted: false, trace: TRACE, warmup_s: 0, duration_s: 1, pacing_mode: 'lockstep' });
    expect(lockstep).toMatchObject({ pacing: 'lockstep', packets: { sent: 2, late: 0 } });
  });

  it('adds the units of a native server once a session was granted one', () => {
    measures.units.session(80, 800);
    const s = measures.summary([result('a')], { interrupted: true, trace: TRACE, warmup_s: 0, duration_s: 1 });
    expect(s.interrupted).toBe(true);
    expect(s.units).toMatchObject({ unit_ms: 80, miss_threshold_ms: 80 });
    expect(s).toHaveProperty('unit_lag_ms');
  });
});
