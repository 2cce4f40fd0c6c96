import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUsHistogram, decodeHistogram, decodeSamples, encodeHistogram, encodeSamples, PacingRecorder, percentilesMs, recordMs, SampleStore, unitLagMs, unitMissRate } from '@duplex-bench/metrics';
import { buildMergedSummary, mergeChildren, mergedLegacy, mergeLegacy, pooledDuplexSessions, readRunForMerge, steadyFrom } from './merge-runs';
import { legacyFigures, type RunSummary } from './summary';

/** One process's samples: one session of `packets` on-time packets. */
function samples(packets: number) {
  const pacing = new PacingRecorder(80);
  const store = new SampleStore(80);
  const column = store.open('s0');
  for (let seq = 0; seq < packets; seq++) {
    const p = { seq, scheduled_s: 1 + seq * 0.08, start_s: 1 + seq * 0.08, completed_s: 1 + seq * 0.08, send_ms: 0.1, buffered_bytes: 0 };
    pacing.record(p, 1);
    column.push(p);
  }
  return decodeSamples(encodeSamples(store.toFile(pacing)));
}

const summary = (events: RunSummary['events']) =>
  ({
    sessions: { started: 1, completed: 1, incomplete: 0, with_violation: 0, incomplete_reasons: {} },
    interrupted: false,
    cpu_cores: { total: 0.1 },
    peak_rss_bytes: 1,
    event_loop_lag_ms: { max: 1, over_80ms: 0 },
    events,
  }) as unknown as RunSummary;

describe('buildMergedSummary', () => {
  it('sums server errors (and their codes), unknown event types and server_event_seq gaps over processes', () => {
    const merged = buildMergedSummary(
      ['p0', 'p1', 'p2'],
      [
        { samples: samples(5), summary: summary({ server_errors: 1, server_error_codes: { busy: 1 }, unknown: { 'vendor.x': 2 }, server_event_seq: { sessions: 1, gaps: 1, missing_events: 3, not_rising: 0 } }) },
        { samples: samples(5), summary: summary({ server_errors: 2, server_error_codes: { busy: 1, overloaded: 1 }, unknown: { 'vendor.x': 1, 'vendor.y': 1 } }) },
        { samples: samples(5), summary: summary({ server_errors: 0, unknown: {}, server_event_seq: { sessions: 1, gaps: 2, missing_events: 2, not_rising: 1 } }) },
      ],
    );
    expect(merged.events).toEqual({
      server_errors: 3,
      server_error_codes: { busy: 2, overloaded: 1 },
      unknown: { 'vendor.x': 3, 'vendor.y': 1 },
      server_event_seq: { sessions: 2, gaps: 3, missing_events: 5, not_rising: 1 },
    });
    expect(merged.packets.sent).toBe(15);
  });
});

describe('buildMergedSummary: unit lag', () => {
  it("merges a run with itself to its own figures, a percentile in the max's bucket included", () => {
    // 26 lags near 202 ms (HDR buckets there are 128 µs wide): p95 and the max share a bucket.
    const lag = createUsHistogram();
    for (let i = 0; i < 24; i++) lag.recordValue(150_000 + i * 1000);
    lag.recordValue(202_400);
    lag.recordValue(202_413);
    const counts = { unit_ms: 80, expected: 26, done: 26, missed: 26, done_before_input: 0 };
    const own = { ...summary({ server_errors: 0, unknown: {} }), units: { ...counts, miss_threshold_ms: 80 }, unit_lag_ms: unitLagMs(lag), unit_miss_rate: unitMissRate(counts) } as RunSummary;
    const file = samples(5);
    const run = { samples: { ...file, histograms: { ...file.histograms, unit_lag: encodeHistogram(lag) } }, summary: own };
    const merged = buildMergedSummary(['p0', 'p1'], [run, run]);
    expect(own.unit_lag_ms).toMatchObject({ p95: 202.413, max: 202.413 });
    expect(merged.unit_lag_ms).toMatchObject({ count: 52, p50: own.unit_lag_ms?.p50, p95: own.unit_lag_ms?.p95, p99: own.unit_lag_ms?.p99, max: 202.413 });
  });
});

describe('buildMergedSummary: the client receive delay', () => {
  /** A run whose server stamped frames that waited `delays_ms` before this client stamped them, its reads held back `paused` times. */
  function stamped(delays_ms: number[], paused: number) {
    const h = createUsHistogram();
    for (const d of delays_ms) recordMs(h, d);
    const own = { ...summary({ server_errors: 0, unknown: {} }), receive_delay_ms: percentilesMs(h), ...(paused ? { reads_paused: paused } : {}) } as RunSummary;
    const file = samples(5);
    return { samples: { ...file, histograms: { ...file.histograms, receive_delay: encodeHistogram(h) } }, summary: own };
  }

  it("pools every process's stamped frames (histograms merged, the exact max kept) and sums the held-back reads", () => {
    const a = Array.from({ length: 300 }, (_, i) => 0.2 + i * 0.01);
    const b = [...Array.from({ length: 99 }, (_, i) => 1 + i * 0.05), 41.337];
    const merged = buildMergedSummary(['p0', 'p1'], [stamped(a, 3), stamped(b, 0)]);
    const all = createUsHistogram();
    for (const d of [...a, ...b]) recordMs(all, d);
    expect(merged.receive_delay_ms).toMatchObject({ count: 400, p50: percentilesMs(all).p50, p99: percentilesMs(all).p99, max: 41.337 });
    expect(merged.reads_paused).toBe(3);
    expect(merged.measurement_origin.receive_delay_ms).toMatch(/pooled over every stamped frame of every process/);
  });

  it('no process stamped: null, as one process says it, and no held-back reads', () => {
    const merged = buildMergedSummary(['p0', 'p1'], [{ samples: samples(5), summary: summary({ server_errors: 0, unknown: {} }) }, { samples: samples(5), summary: null }]);
    expect(merged.receive_delay_ms).toBeNull();
    expect(merged.reads_paused).toBeUndefined();
  });

  it('a run written by SampleStore keeps its receive delay histogram, and none when nothing was stamped', () => {
    const h = createUsHistogram();
    recordMs(h, 2.5);
    const store = new SampleStore(80);
    const withStamps = decodeSamples(encodeSamples(store.toFile(new PacingRecorder(80), undefined, undefined, h)));
    expect(percentilesMs(decodeHistogram(withStamps.histograms.receive_delay as string)).count).toBe(1);
    expect(decodeSamples(encodeSamples(store.toFile(new PacingRecorder(80), undefined, undefined, createUsHistogram()))).histograms.receive_delay).toBeUndefined();
  });
});

describe('steadyFrom', () => {
  it('is the run\'s start gate plus its warm-up, when it had one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'merge-steady-'));
    await writeFile(join(dir, 'run.json'), JSON.stringify({ gate_s: 10.5 }));
    expect(await steadyFrom(dir, { warmup_s: 2 } as RunSummary)).toBe(12.5);
    expect(await steadyFrom(dir, { warmup_s: 0 } as RunSummary)).toBeUndefined();
    expect(await steadyFrom(dir, null)).toBeUndefined();
  });
});

describe('run files that do not read, named', () => {
  const cut = (path: string) => new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`);
  const failure = (p: Promise<unknown>) => p.then(() => new Error('it resolved'), (err: unknown) => err as Error);
  const runDir = async (name: string, files: Record<string, string | Uint8Array>) => {
    const dir = join(await mkdtemp(join(tmpdir(), 'merge-corrupt-')), name);
    await mkdir(dir);
    for (const [file, data] of Object.entries(files)) await writeFile(join(dir, file), data);
    return dir;
  };
  const goodSummary = JSON.stringify(summary({ server_errors: 0, unknown: {} }));

  it("merge: a run's summary.json cut short", async () => {
    const dir = await runDir('a', { 'samples.msgpack': encodeSamples(samples(3)), 'summary.json': '{"sessions":{"sta' });
    expect((await failure(readRunForMerge(dir))).message).toMatch(cut(join(dir, 'summary.json')));
  });

  it("merge: a run's run.json cut short, read for its warm-up", async () => {
    const dir = await runDir('a', { 'run.json': '{"gate_s": 10.' });
    expect((await failure(steadyFrom(dir, { warmup_s: 2 } as RunSummary))).message).toMatch(cut(join(dir, 'run.json')));
  });

  it("merge: a run's duplex_metrics.json cut short", async () => {
    const dir = await runDir('a', { 'duplex_metrics.json': '{"duplex_session_metrics":[{"session_id":"s0"' });
    expect(await failure(pooledDuplexSessions([dir]))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(cut(join(dir, 'duplex_metrics.json'))) });
  });

  it("a launched run: a child's summary that does not read counts the child as died, its failure naming the file", async () => {
    const p0 = await runDir('p0', { 'samples.msgpack': encodeSamples(samples(3)), 'summary.json': goodSummary });
    const p1 = await runDir('p1', { 'samples.msgpack': encodeSamples(samples(3)), 'summary.json': '{"sessions":' });
    const { died, summarised, merged } = await mergeChildren([p0, p1], [{ index: 0, failure: null }, { index: 1, failure: null }], 2);
    expect(summarised).toEqual([p0]);
    expect(died).toEqual([{ index: 1, failure: expect.stringMatching(new RegExp(`^left a summary that does not read: ${join(p1, 'summary.json')}: not valid JSON \\(.+\\); the file may be cut short$`)) }]);
    expect(merged.sessions.incomplete_reasons.process_died).toBe(2);
  });

  it("a launched run: a child's samples.msgpack that does not decode, named", async () => {
    const p0 = await runDir('p0', { 'samples.msgpack': Buffer.from([0xc1, 0xc1]), 'summary.json': goodSummary });
    const err = await failure(mergeChildren([p0], [{ index: 0, failure: null }], 1));
    expect(err.message).toMatch(new RegExp(`^${join(p0, 'samples.msgpack')}: not valid msgpack \\(.+\\); the file may be cut short$`));
  });
});

describe('mergedLegacy (merge of --profile qwen3-omni-half-duplex runs)', () => {
  /** One legacy session's row as sessions.jsonl keeps it: its oracle counts and, when its probe was answered, the ack. */
  const row = (created: number, overlapped: number, open: number, probe_ack_ms?: number) => ({
    dialect_events: { responses_created: created, responses_overlapped_by_speech: overlapped, responses_open_at_close: open, ...(probe_ack_ms !== undefined ? { probe_ack_ms } : {}) },
  });
  const p0 = [row(3, 1, 0, 100), row(2, 0, 1, 300)];
  const p1 = [row(4, 0, 0, 200), row(1, 0, 0)];

  it("pools every part's sessions as run does: counts summed, probe_ack_s over every answered probe of every part", () => {
    const merged = mergedLegacy([
      { rows: p0, legacy: legacyFigures(p0) ?? undefined },
      { rows: p1, legacy: legacyFigures(p1) ?? undefined },
    ]);
    expect(merged).toMatchObject({ sessions: 4, responses_created: 10, responses_overlapped_by_speech: 1, responses_open_at_close: 1 });
    expect(merged?.probe_ack_s).toEqual({ count: 3, mean: 0.2, p50: 0.2, p99: 0.3 });
    // The same figures as one run of the four sessions.
    const one = legacyFigures([...p0, ...p1]);
    expect(merged).toMatchObject({ ...one, measurement_origin: expect.objectContaining(one?.measurement_origin) });
    expect(merged?.measurement_origin.pooled).toMatch(/over every answered probe of 2 part/);
  });

  it('a part whose sessions.jsonl holds no rows adds its summary\'s counts; its acks are left out of probe_ack_s, and the origin says so', () => {
    const merged = mergedLegacy([{ rows: p0 }, { rows: [], legacy: legacyFigures(p1) ?? undefined }]);
    expect(merged).toMatchObject({ sessions: 4, responses_created: 10, responses_overlapped_by_speech: 1, responses_open_at_close: 1 });
    expect(merged?.probe_ack_s).toEqual({ count: 2, mean: 0.2, p50: 0.1, p99: 0.3 });
    expect(merged?.measurement_origin.pooled).toMatch(/probe_ack_s over the 1 part\(s\) with session rows only \(1 acks left out: .*percentiles do not pool\)/);
  });

  it('only summaries: counts summed, no probe_ack_s', () => {
    const merged = mergedLegacy([{ rows: [], legacy: legacyFigures(p0) ?? undefined }, { rows: [], legacy: legacyFigures(p1) ?? undefined }]);
    expect(merged).toMatchObject({ sessions: 4, responses_created: 10, probe_ack_s: null });
  });

  it('no legacy part: no block', () => {
    expect(mergedLegacy([{ rows: [{ dialect_events: { frames_sent: 3 } }] }, { rows: [] }])).toBeNull();
  });

  it("mergeLegacy reads each run's sessions.jsonl; a line that does not read is named", async () => {
    const base = await mkdtemp(join(tmpdir(), 'merge-legacy-'));
    const dirs = [join(base, 'a'), join(base, 'b')];
    for (const [i, rows] of [p0, p1].entries()) {
      await mkdir(dirs[i]);
      await writeFile(join(dirs[i], 'sessions.jsonl'), rows.map((r, j) => `${JSON.stringify({ id: `s${j}`, completed: true, ...r })}\n`).join(''));
    }
    expect(await mergeLegacy(dirs, [undefined, undefined])).toMatchObject({ sessions: 4, responses_created: 10, probe_ack_s: { count: 3 } });
    await writeFile(join(dirs[1], 'sessions.jsonl'), '{"id":"s0","dialect');
    await expect(mergeLegacy(dirs, [undefined, undefined])).rejects.toMatchObject({ code: 'BAD_RUN_FILE' });
  });
});
