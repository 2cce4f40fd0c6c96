import { behaviourDelays, startMockServer } from '@duplex-bench/mock-servers';
import { conversationRun, median, mockSessions } from './conversation.spec-helpers';

// The client's figures against the mock's own log, within 60 ms: the mock runs in this test's
// process, so a loop held up by another test file's work shows as a difference (85 ms once, three
// files at a time). Run alone, with nothing beside it (jest.e2e-alone.config.ts).
jest.setTimeout(120_000);

describe('run --conversation against the native mock with behaviour knobs, alone', () => {
  it("reads response and stop latency within 60 ms of what the mock's own log says it did", async () => {
    const mock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: 'default', respond_after_ms: 400, stop_after_ms: 200, takeover_after_ms: 800 } });
    try {
      const { code, stderr, summary, turns } = await conversationRun(mock, 'default', 8, 18);
      expect(stderr).not.toMatch(/error/);
      expect(code).toBe(0);
      const truth = behaviourDelays(mockSessions(mock));
      const b = summary.behaviour;
      expect(b.response_latency_ms.count).toBeGreaterThanOrEqual(16);
      expect(b.stop_latency_ms.count).toBeGreaterThanOrEqual(8);
      expect(Math.abs((b.response_latency_ms.p50 as number) - median(truth.response_ms))).toBeLessThan(60);
      expect(Math.abs((b.stop_latency_ms.p50 as number) - median(truth.stop_ms))).toBeLessThan(60);
      // The script's 1,500 ms pause is longer than the mock's 800 ms: it took the turn in each.
      expect(b.pause_takeover_rate.rate).toBe(1);
      expect(turns.every((t) => t.session.startsWith('s'))).toBe(true);
      expect(Object.keys(b.measurement_origin)).toEqual(expect.arrayContaining(['response_latency_ms', 'stop_latency_ms', 'pause_takeover_rate']));
    } finally {
      await mock.close();
    }
  });

});
