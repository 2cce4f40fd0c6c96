import { BehaviorSubject } from 'rxjs';
import { lockstepAppends, type LockstepPlan } from './lockstep-appends';
import type { SendReceipt } from './send-on';

/** A hand-driven clock and deadlines: nothing fires until the test says so. */
function virtualTime() {
  let now = 10;
  const timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
  return {
    clock: { now_s: () => now },
    timers: {
      arm(delay_ms: number, fn: () => void) {
        const t = { at: now + delay_ms / 1000, fn, cancelled: false };
        timers.push(t);
        return () => (t.cancelled = true);
      },
    },
    /** Moves time to `t_s` and fires every timer due by then. */
    advance(t_s: number) {
      now = t_s;
      for (const t of timers) {
        if (t.cancelled || t.at > now) continue;
        t.cancelled = true;
        t.fn();
      }
    },
    pending: () => timers.filter((t) => !t.cancelled).length,
  };
}

/** `input_ms` of input in 80 ms packets (the last one short), for a server unit of `unit_ms`. */
function setup(input_ms: number, unit_ms: number, unit_timeout_ms = 5000, start_s = 10) {
  const time = virtualTime();
  const sent: string[] = [];
  const conn = { send: (f: string | Buffer) => void sent.push(String(f)), bufferedAmount: 0 };
  const flow = { append: (id: string, seq: number) => Buffer.from(`${id}:${seq}`) };
  const audio = { packet_ms: 80, packetBase64: () => Buffer.alloc(0) };
  const plan: LockstepPlan = { start_s, packet_count: Math.ceil(input_ms / 80), inputEndMs: (seq) => Math.min((seq + 1) * 80, input_ms), unit_ms, unit_timeout_ms };
  const unitsDone$ = new BehaviorSubject(0);
  const receipts: SendReceipt[] = [];
  let outcome: 'complete' | Error | null = null;
  lockstepAppends(conn, flow, audio, 's_a', time.clock, time.timers, unitsDone$, plan).subscribe({
    next: (r) => receipts.push(r),
    complete: () => (outcome = 'complete'),
    error: (e: Error) => (outcome = e),
  });
  return { time, sent, unitsDone$, receipts, outcome: () => outcome };
}

describe('lockstepAppends', () => {
  it('sends one 80 ms unit per packet and waits for each unit.done, but never for the short last unit (3.3 s input)', () => {
    const s = setup(3300, 80);
    expect(s.sent).toEqual(['s_a0:0']);
    for (let n = 1; n <= 41; n++) {
      expect(s.sent).toHaveLength(n);
      s.unitsDone$.next(n);
    }
    // Packet 41 holds the 20 ms tail: it goes once unit 40 is done, and the stream ends without waiting for unit 41.
    expect(s.sent).toHaveLength(42);
    expect(s.outcome()).toBe('complete');
    expect(s.time.pending()).toBe(0);
    // No schedule: each receipt is due when it went.
    expect(s.receipts.every((r) => r.scheduled_s === r.start_s)).toBe(true);
  });

  it('sends a 1 s unit as 80 ms packets back to back, waiting after the packet that completes it', () => {
    const s = setup(2500, 1000);
    // Unit 0 ends at 1000 ms, inside packet 12 (960–1040 ms).
    expect(s.sent).toHaveLength(13);
    s.unitsDone$.next(1);
    // Unit 1 ends at 2000 ms, the end of packet 24.
    expect(s.sent).toHaveLength(25);
    s.unitsDone$.next(2);
    expect(s.sent).toHaveLength(32);
    expect(s.outcome()).toBe('complete');
  });

  it('does not wait after the last packet when the input ends on a unit boundary', () => {
    const s = setup(160, 80);
    s.unitsDone$.next(1);
    expect(s.sent).toHaveLength(2);
    expect(s.outcome()).toBe('complete');
  });

  it('fails the stream with unit_timeout when a unit.done does not come within its bound', () => {
    const s = setup(800, 80, 2000);
    s.time.advance(11.999);
    expect(s.outcome()).toBeNull();
    s.time.advance(12);
    const err = s.outcome() as Error & { reason?: string };
    expect(err).toBeInstanceOf(Error);
    expect(err.reason).toBe('unit_timeout');
    expect(err.message).toMatch(/unit 0 within 2000 ms/);
    expect(s.sent).toHaveLength(1);
  });

  it('sends nothing before its start', () => {
    const s = setup(240, 80, 2000, 10.5);
    expect(s.sent).toHaveLength(0);
    s.time.advance(10.5);
    expect(s.sent).toHaveLength(1);
    expect(s.receipts[0].start_s).toBe(10.5);
  });

  it('a unit.done in time cancels its bound', () => {
    const s = setup(240, 80, 2000);
    s.time.advance(11);
    s.unitsDone$.next(1);
    s.time.advance(12.5);
    s.unitsDone$.next(2);
    s.time.advance(20);
    expect(s.outcome()).toBe('complete');
  });
});
