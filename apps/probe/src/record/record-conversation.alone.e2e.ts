import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { behaviourDelays, startMockServer } from '@duplex-bench/mock-servers';
import type { BehaviourSummary } from '@duplex-bench/metrics';
import { probe } from '../../test/in-process.spec-helpers';
import { median, mockSessions } from '../../test/conversation.spec-helpers';

// The recorder's response latency against the mock's own log, within 60 ms. The mock runs in this
// test's process: beside two other files' runs its loop was held up and the figures parted by 82.7 ms
// once. Run alone, with nothing beside it (jest.e2e-alone.config.ts); the rest of record
// --conversation is checked in record-command.e2e.ts.
jest.setTimeout(60_000);

describe('probe record --conversation, alone', () => {
  it("reads response latency within 60 ms of the delay the mock's own log says it answered with", async () => {
    // Answers of 1.5 s: by 12 s each session has had q1 and q2 answered.
    const mock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: 'default', respond_after_ms: 400, stop_after_ms: 200, answer_ms: 1500 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'record-conv-alone-'));
      const { code, stderr } = await probe(['record', '--url', mock.url, '--output', dir, '--conversation', 'default', '--per-subset', '2', '--duration', '12', '--concurrency', '2', '--allow-unqualified']);
      expect([code, stderr]).toEqual([0, expect.not.stringMatching(/error/)]);
      const { behaviour: b } = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { behaviour: BehaviourSummary };
      const truth = behaviourDelays(mockSessions(mock)).response_ms;
      expect(b.response_latency_ms.count).toBeGreaterThanOrEqual(4);
      expect(truth.length).toBeGreaterThanOrEqual(4);
      expect(Math.abs((b.response_latency_ms.p50 as number) - median(truth))).toBeLessThan(60);
    } finally {
      await mock.close();
    }
  });
});
