import { UnitLagRecorder, unitLagMs, unitMissRate, unitsPerSecond, unitStepMs } from './unit-lag';

/** Sends `input_ms` of input in 80 ms packets from t = 0, one per 80 ms, each send returning 1 ms after it starts. */
function sendRealtime(units: ReturnType<UnitLagRecorder['session']>, input_ms: number): void {
  for (let seq = 0; seq * 80 < input_ms; seq++) {
    const start_s = (seq * 80) / 1000;
    units.inputSent(start_s, Math.min((seq + 1) * 80, input_ms), start_s + 0.001);
  }
}

describe('SessionUnits', () => {
  it('runs each lag from the send completion of the packet holding the unit’s last sample (1 s units, 80 ms packets)', () => {
    const recorder = new UnitLagRecorder();
    const units = recorder.session(1000, 2000);
    sendRealtime(units, 2000);
    // Unit 0 ends at 1000 ms, inside packet 12 (960–1040 ms), sent at 0.960 s and complete at 0.961 s.
    units.unitDone(1.161);
    // Unit 1 ends at 2000 ms, the end of packet 24, complete at 1.921 s; 1.2 s later is past one unit.
    units.unitDone(3.121);
    units.finish();
    const lag = unitLagMs(recorder.lag);
    // HDR at 3 significant digits: a percentile reads the top of its bucket, within 0.1 %.
    expect(lag).toMatchObject({ count: 2, max: 1200 });
    expect(lag.p50).toBeCloseTo(200, -1);
    expect(lag.p95).toBe(1200);
    expect(recorder.counts()).toEqual({ unit_ms: 1000, expected: 2, done: 2, missed: 1, done_before_input: 0 });
    expect(unitMissRate(recorder.counts())).toBe(0.5);
  });

  it('times an hour of units, each done 3 units late, and 2,000 units sent ahead of their answers, from the same moments as a few', () => {
    // 80 ms units for an hour: 45,000, each done 240 ms after its input was complete.
    const recorder = new UnitLagRecorder();
    const hour = recorder.session(80, 3_600_000);
    for (let seq = 0; seq < 45_000; seq++) {
      const start_s = (seq * 80) / 1000;
      hour.inputSent(start_s, (seq + 1) * 80, start_s + 0.001);
      if (seq >= 3) hour.unitDone(start_s + 0.001);
    }
    expect(unitLagMs(recorder.lag)).toMatchObject({ count: 44_997, max: 240 });
    // Many in flight at once (the server far behind): the units kept grow with them, and each lag is still its own.
    const behind = new UnitLagRecorder();
    const late = behind.session(80, 160_000);
    sendRealtime(late, 160_000);
    for (let k = 0; k < 2000; k++) late.unitDone(200 + k * 0.001);
    const lag = unitLagMs(behind.lag);
    expect(lag.count).toBe(2000);
    // Unit 0 complete at 0.001 s, done at 200 s; unit 1,999 complete at 159.921 s, done at 201.999 s.
    expect(lag.max).toBeCloseTo(199_999, -2);
    expect(lag.p50).toBeGreaterThan(119_000);
    expect(lag.p50).toBeLessThan(122_000);
  });

  it('counts the short last unit, leaves out the empty end-of-input unit, and misses a unit that never came', () => {
    const recorder = new UnitLagRecorder();
    // 3.3 s at 80 ms units: 41 whole units and one of 20 ms.
    const short = recorder.session(80, 3300);
    expect(short.total).toBe(42);
    sendRealtime(short, 3300);
    for (let k = 0; k < 41; k++) short.unitDone((k * 80 + 40) / 1000);
    short.finish();
    expect(recorder.counts()).toMatchObject({ expected: 42, done: 41, missed: 1 });
    // Input on a unit boundary: the server's extra empty unit adds nothing.
    const aligned = new UnitLagRecorder();
    const units = aligned.session(80, 160);
    sendRealtime(units, 160);
    for (const t of [0.04, 0.12, 0.13]) units.unitDone(t);
    units.finish();
    expect(aligned.counts()).toMatchObject({ expected: 2, done: 2, missed: 0 });
    expect(unitLagMs(aligned.lag).count).toBe(2);
  });

  it("expects every unit of the input when a session stops early, the unsent ones missed (sglang-omni's expected_units), and records no lag for a unit done before its input", () => {
    const recorder = new UnitLagRecorder();
    const units = recorder.session(80, 800);
    units.unitDone(0.001);
    units.inputSent(0, 80, 0.002);
    units.inputSent(0.08, 160, 0.082);
    units.finish();
    units.finish();
    // 800 ms of input in 80 ms units: 10 expected; one unit.done came (before its input), 9 never did.
    expect(recorder.counts()).toEqual({ unit_ms: 80, expected: 10, done: 1, missed: 9, done_before_input: 1 });
    expect(recorder.lag.totalCount).toBe(0);
  });

  it('expects only the units of the input sent when the input ended early by design (a conversation played once), its short last unit complete with the last append', () => {
    const recorder = new UnitLagRecorder();
    // Given 10 s (its bound), the session's script ended after 1,000 ms: 12 whole 80 ms units and one of 40 ms.
    const units = recorder.session(80, 10_000);
    expect(units.total).toBe(125);
    sendRealtime(units, 1000);
    units.inputEnded(1000);
    expect(units.total).toBe(13);
    // Each unit.done 40 ms after its packet's send return (packet k: k x 80 ms + 1 ms).
    for (let k = 0; k < 13; k++) units.unitDone((k * 80 + 41) / 1000);
    // The server's empty end-of-input unit adds nothing.
    units.unitDone(1.2);
    units.finish();
    expect(recorder.counts()).toEqual({ unit_ms: 80, expected: 13, done: 13, missed: 0, done_before_input: 0 });
    // The short unit's too: from the last append's send return (0.961 s) to its unit.done (1.001 s).
    expect(unitLagMs(recorder.lag)).toMatchObject({ count: 13 });
    expect(unitLagMs(recorder.lag).max).toBeCloseTo(40, 0);
    // An end at or past the length given changes nothing.
    const whole = new UnitLagRecorder().session(80, 160);
    whole.inputEnded(160);
    expect(whole.total).toBe(2);
  });

  it('gives units per second over first append send start to the last unit.done, and their sum over sessions', () => {
    const recorder = new UnitLagRecorder();
    for (const last_s of [1, 2]) {
      const units = recorder.session(80, 160);
      units.inputSent(0, 80, 0.001);
      units.inputSent(0.001, 160, 0.002);
      units.unitDone(last_s / 2);
      units.unitDone(last_s);
      units.finish();
    }
    expect(recorder.units_per_s).toEqual([2, 1]);
    expect(unitsPerSecond(recorder.units_per_s)).toEqual({
      units_per_s: { count: 2, mean: 1.5, p50: 1, p90: 2, min: 1, max: 2, per_session: [2, 1] },
      units_per_s_total: 3,
    });
    expect(unitStepMs(recorder.lag)).toMatchObject({ count: 4 });
    expect(unitsPerSecond([]).units_per_s.p50).toBeNull();
  });
});
