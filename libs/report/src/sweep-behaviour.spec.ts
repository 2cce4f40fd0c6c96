import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSummary } from '@duplex-bench/results';
import { behaviourFigures, loadSweepBehaviour } from './sweep-behaviour';

/** A run's summary with the behaviour block's four figures (and a run without one when `p95` is null). */
function summary(p95: number | null, takeover: [number, [number, number]] = [0, [0, 0.3]]): RunSummary {
  const latency = (v: number) => ({ count: 10, p50: v / 2, p90: v, p95: v, p99: v, max: v });
  const base = { qualified: true, sessions: { incomplete: 0 } } as unknown as RunSummary;
  if (p95 === null) return base;
  return {
    ...base,
    behaviour: {
      response_latency_ms: latency(p95),
      stop_latency_ms: latency(p95 / 2),
      cancel_latency_ms: latency(0),
      pause_takeover_rate: { rate: takeover[0], count: 10, ci95: takeover[1] },
      backchannel_yield_rate: { rate: null, count: 0, ci95: null },
      overlap_ms: latency(0),
      outcomes: {},
      measurement_origin: { response_latency_ms: 'client: utterance end → next span', pause_takeover_rate: 'pauses taken' },
    },
  };
}

describe('a conversation sweep: behaviour against the session count', () => {
  it('reads each figure per count and run, rates with the widest interval of their runs', () => {
    const figures = behaviourFigures([
      [summary(400), summary(420)],
      [summary(900, [0.2, [0.05, 0.5]]), summary(950, [0.1, [0.02, 0.4]])],
    ]);
    expect(figures.map((f) => f.figure)).toEqual(['response_latency_p95_ms', 'stop_latency_p95_ms', 'pause_takeover_rate', 'backchannel_yield_rate']);
    const [response, stop, takeover, yielded] = figures;
    expect(response).toMatchObject({ unit: 'ms', origin: 'client: utterance end → next span', values: [[400, 420], [900, 950]], ci95: null });
    expect(stop.values).toEqual([[200, 210], [450, 475]]);
    expect(takeover).toMatchObject({ unit: 'fraction', origin: 'pauses taken', values: [[0, 0], [0.2, 0.1]], ci95: [[0, 0.3], [0.02, 0.5]] });
    expect(yielded).toMatchObject({ values: [[null, null], [null, null]], ci95: [null, null] });
  });

  it('is empty for a sweep whose runs carry no behaviour block', () => {
    expect(behaviourFigures([[summary(null)], [null]])).toEqual([]);
  });

  it("finds each run's summary beside sweep.json, wherever the sweep wrote it from", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-behaviour-'));
    await mkdir(join(dir, 's4-r1'));
    await writeFile(join(dir, 's4-r1', 'summary.json'), JSON.stringify(summary(480)));
    const points = [{ sessions: 4, verdict: 'pass' as const, runs: [{ dir: 'elsewhere/s4-r1', processes: 1, sessions_run: 4, code: 0, qualified: true, slo: [] }] }];
    expect((await loadSweepBehaviour(dir, points))[0].values).toEqual([[480]]);
  });

  it("names a run's summary.json cut short", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-behaviour-'));
    await mkdir(join(dir, 's4-r1'));
    const path = join(dir, 's4-r1', 'summary.json');
    await writeFile(path, '{"qualified":true,"behaviour":{');
    const points = [{ sessions: 4, verdict: 'pass' as const, runs: [{ dir: 'elsewhere/s4-r1', processes: 1, sessions_run: 4, code: 0, qualified: true, slo: [] }] }];
    const err = await loadSweepBehaviour(dir, points).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`));
  });
});
