import { ManualTimers } from '@duplex-bench/pacer/testing';
import { ADMISSIONS_KEPT, MockStatsRecorder } from './mock-stats';

const recorder = (vllm: boolean) => new MockStatsRecorder({ clock: new ManualTimers(), unit_ms: 80, arrival_origin: 'the origin', vllm });

describe('MockStatsRecorder', () => {
  it('counts sessions, frames and errors, and gives the vllm-omni figures only to that flavour', () => {
    const r = recorder(false);
    r.sessionOpened();
    r.sessionOpened();
    r.sessionClosed();
    r.sessionCompleted();
    r.refused503();
    r.withBearer();
    r.frameSent();
    r.socketError();
    const s = r.stats();
    expect(s.sessions).toEqual({ opened: 2, completed: 1, refused_503: 1, active: 1, with_bearer: 1 });
    expect(Object.keys(s)).toEqual(['measurement_origin', 'admissions', 'sessions', 'appends', 'frames_sent', 'socket_errors', 'arrival_deviation_ms', 'arrivals_late', 'event_loop_lag_ms', 'cpu_cores', 'cpu_us_per_append']);
    expect([s.frames_sent, s.socket_errors, s.measurement_origin.arrival_deviation_ms]).toEqual([1, 1, 'the origin']);
    const v = recorder(true);
    v.refusedFull();
    v.heldAfterDisconnect(1);
    v.heldAfterDisconnect(1);
    v.heldAfterDisconnect(-1);
    v.blockedTurns(3);
    v.protocolViolations({ commit_under_server_vad: 2 });
    v.protocolViolations({ commit_under_server_vad: 1, closed_with_open_turn: 1 });
    expect(v.stats().sessions).toEqual({
      opened: 0,
      completed: 0,
      refused_503: 0,
      active: 0,
      with_bearer: 0,
      held_after_disconnect: 1,
      refused_full: 1,
      blocked_turns: 3,
      protocol_violations: { commit_under_server_vad: 3, closed_with_open_turn: 1 },
    });
    r.stop();
    v.stop();
  });

  it('counts the arrivals of open sessions when read and of ended ones for good, late past one unit', () => {
    const r = recorder(false);
    const open = r.arrivals();
    const ended = r.arrivals();
    for (const offset of [10, 10, 100]) ended.add(offset);
    open.add(5);
    r.arrivalsDone(ended);
    r.arrivalsDone(ended); // twice: counted once
    const s = r.stats();
    expect(s.appends).toBe(4);
    expect(s.arrivals_late).toBe(1);
    expect(s.arrival_deviation_ms.max).toBeCloseTo(90, 1);
    r.stop();
  });

  it('logs each admission with its time and the slots held, keeping a bounded number and counting the rest', () => {
    const clock = new ManualTimers();
    const r = new MockStatsRecorder({ clock, unit_ms: 80, arrival_origin: 'the origin', vllm: false });
    clock.now = 1500;
    r.admission('accepted', 0);
    clock.now = 2000;
    r.admission('refused', 8);
    expect(r.stats().admissions).toEqual({ accepted: 1, refused: 1, not_kept: 0, log: [{ t_s: 1.5, outcome: 'accepted', held: 0 }, { t_s: 2, outcome: 'refused', held: 8 }] });
    for (let i = 0; i < ADMISSIONS_KEPT; i++) r.admission('accepted', 0);
    const a = r.stats().admissions;
    expect([a.accepted, a.log.length, a.not_kept]).toEqual([ADMISSIONS_KEPT + 1, ADMISSIONS_KEPT, 2]);
    r.stop();
  });
});
