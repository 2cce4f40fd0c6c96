import { PacingRecorder, SampleStore } from '@duplex-bench/metrics';
import { deviationCdf, pacingBins, unitsOf, verdictOf, videoOf } from './report-data';

/** Two sessions of 20 packets, 80 ms apart; session b's packet 13 is 95 ms late. */
function samples() {
  const store = new SampleStore(80);
  for (const [id, origin] of [['a', 10], ['b', 10.04]] as const) {
    const col = store.open(id);
    for (let seq = 0; seq < 20; seq++) {
      const dev_ms = id === 'b' && seq === 13 ? 95 : seq === 0 ? 0 : (seq % 3) * 0.5;
      const start_s = origin + (seq * 80 + dev_ms) / 1000;
      col.push({ seq, scheduled_s: origin + seq * 0.08, start_s, completed_s: start_s + 0.0002, send_ms: 0.2, buffered_bytes: 0 });
    }
  }
  return store.toFile(new PacingRecorder(80));
}

describe('report data', () => {
  it('bins every packet by its send start since the first packet: p50, p99, max and the late ones per bin', () => {
    const { bins, first_s } = pacingBins([samples()], 80, 0.5);
    expect(first_s).toBe(10);
    expect(bins.packets.reduce((a, b) => a + b, 0)).toBe(40);
    expect(bins.late.reduce((a, b) => a + b, 0)).toBe(1);
    // b's packet 13 goes at 10.04 + 1.04 + 0.095 s: the bin from 1.0 s.
    const i = bins.late.findIndex((n) => n > 0);
    expect(bins.t_s[i]).toBe(1);
    expect(bins.max_ms[i]).toBeCloseTo(95, 3);
    expect(Math.max(...bins.max_ms.filter((_, k) => k !== i))).toBeLessThanOrEqual(1);
  });

  it('keeps the largest deviation in the CDF, rising to 1', () => {
    const cdf = deviationCdf([samples()], 10);
    expect(cdf.at(-1)).toEqual([95, 1]);
    for (let k = 1; k < cdf.length; k++) {
      expect(cdf[k][0]).toBeGreaterThanOrEqual(cdf[k - 1][0]);
      expect(cdf[k][1]).toBeGreaterThan(cdf[k - 1][1]);
    }
  });
});

describe('report units row', () => {
  const base = { qualified: true, interrupted: false, packet_ms: 80, packets: { sent: 10, late: 0 }, sessions: { started: 1, completed: 1, incomplete: 0, with_violation: 0, incomplete_reasons: {} } };

  it('shows a native run’s unit lag and miss rate with their origin, and nothing for a run without units', () => {
    const row = unitsOf({
      ...base,
      unit_lag_ms: { count: 26, p50: 40, p95: 190, p99: 200, max: 201 },
      unit_miss_rate: 0.153846,
      units: { unit_ms: 80, expected: 26, done: 26, done_before_input: 0, missed: 4, miss_threshold_ms: 80 },
      measurement_origin: { unit_lag_ms: 'client: unit.done received minus input complete', unit_miss_rate: 'lag over one unit' },
    });
    expect(row?.title).toBe('Unit lag and miss rate (80 ms units)');
    expect(row?.figures).toMatchObject({ 'lag p95 ms': 190, missed: 4, 'miss rate': 0.153846 });
    expect(row?.origin).toMatch(/unit\.done received/);
    expect(unitsOf(base)).toBeNull();
  });
});

describe('report camera row', () => {
  it('shows the frames a --video run sent, their bytes and the bytes per frame, with their origin; nothing without frames', () => {
    const base = { qualified: true, interrupted: false, packet_ms: 80, packets: { sent: 10, late: 0 }, sessions: { started: 1, completed: 1, incomplete: 0, with_violation: 0, incomplete_reasons: {} } };
    const row = videoOf({ ...base, video: { source: '/frames', frames_sent: 12, frame_bytes: 60_000, image_items_deleted: 4, measurement_origin: { frames_sent: 'client: frames sent', frame_bytes: 'JPEG bytes' } } });
    expect(row).toEqual({ title: 'Camera frames (/frames)', figures: { 'frames sent': 12, 'JPEG bytes': 60_000, 'bytes per frame': 5000, 'image items deleted': 4 }, origin: 'client: frames sent; bytes: JPEG bytes' });
    expect(videoOf(base)).toBeNull();
  });
});

describe('report verdict line', () => {
  const base = { qualified: true, interrupted: false, packet_ms: 80, packets: { sent: 0, late: 0 }, sessions: { started: 2, completed: 0, incomplete: 2, with_violation: 0, incomplete_reasons: { admission_refused: 2 } } };

  it('says FAILED with the reason when the run measured nothing, though no packet was late', () => {
    expect(verdictOf({ ...base, verdict: 'failed', failed_reason: 'no session completed (2 admission_refused)' })).toEqual({ qualified: false, interrupted: false, line: 'FAILED: no session completed (2 admission_refused)' });
    expect(verdictOf({ ...base, packets: { sent: 10, late: 0 }, verdict: 'qualified' }).line).toMatch(/^QUALIFIED: /);
    expect(verdictOf({ ...base, packets: { sent: 10, late: 2 }, qualified: false }).line).toMatch(/^UNQUALIFIED: 2 late packet/);
  });
});
