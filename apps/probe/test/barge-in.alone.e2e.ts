import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { speechDir } from '@duplex-bench/audio';
import { behaviourDelays, startMockServer, type MockServer, type MockServerOptions } from '@duplex-bench/mock-servers';
import type { BehaviourSummary } from '@duplex-bench/metrics';
import { runBounded } from './spawn.spec-helpers';

// The client's acks and stop latency against the mock's own log, within 60–200 ms: the mock runs in
// this test's process, so another file's work beside it shows as a difference (a clean clone's CI read
// an ack 216.7 ms off, three files at a time). Run alone, with nothing beside it (jest.e2e-alone.config.ts).
jest.setTimeout(90_000);

/** The executable a user runs: the compiled kit. */
const BIN = join(__dirname, '..', '..', '..', 'bin', 'duplex-bench.js');

interface MockEvent {
  kind: string;
  t_ms: number;
  why?: string;
  audio_end_ms?: number;
  played_ms?: number;
  heard_ms?: number | null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

function mockLog(mock: MockServer): MockEvent[][] {
  const log = (mock.stats() as unknown as { behaviour: { sessions: Array<{ events: MockEvent[] }> } }).behaviour;
  return log.sessions.map((s) => s.events);
}

async function conversationRun(mock: MockServer, protocol: 'openai' | 'vllm-omni', script: string, sessions: number, duration_s: number) {
  const dir = await mkdtemp(join(tmpdir(), 'barge-in-'));
  const { code, stdout, stderr } = await runBounded(
    process.execPath,
    [BIN, 'run', '--url', mock.url, '--protocol', protocol, '--concurrency', String(sessions), '--duration', String(duration_s), '--conversation', script, '--output', dir, '--json', '--quiet', '--allow-unqualified'],
    { bound_ms: (duration_s + 30) * 1000, label: 'duplex-bench run' },
  );
  const summary = JSON.parse(stdout.trim().split('\n').pop() as string) as { qualified: boolean; behaviour: BehaviourSummary };
  return { code, stderr, summary };
}

/**
 * The mocks deliver an answer one output unit at a time, each at its unit's start: with units of
 * 1 s (vLLM-Omni's chunk period) and 2 s (an OpenAI-like burst) the audio received runs far ahead
 * of the audio played, so a client that reported what it received instead of what played would
 * miss the mock's truth by far more than the bound.
 */
const behaviourOf = (script: string): MockServerOptions['behaviour'] => ({ conversation: script, respond_after_ms: 400, stop_after_ms: 200 });

/**
 * One barge-in a pass: q2 (2.9 s), the answer heard for 800 ms, stop.wav (2.0 s) over it, the
 * answer's end, then 4 s of silence. A run of 9 s ends in that silence, once every session's
 * barge-in is over: cut inside an utterance, an openai session would wait its drain out for a
 * speech_stopped its server VAD never sends.
 */
async function bargeInScript(): Promise<string> {
  const speech = speechDir();
  const script = join(await mkdtemp(join(tmpdir(), 'barge-in-script-')), 'barge-in.yaml');
  await writeFile(
    script,
    ['name: barge-in', 'steps:', `  - say: ${join(speech, 'q2.wav')}`, '  - listen: {until: model_speech, ms: 800}', `  - say: ${join(speech, 'stop.wav')}`, '    expect: stop', '  - listen: {until: model_done, max_s: 10}', '  - silence_ms: 4000', ''].join('\n'),
  );
  return script;
}

describe('barge-in against the model mocks: what the probe sends is what was heard', () => {
  it('openai: truncates at the played position (within 100 ms of the mock\'s own truth), and reads stop latency within 60 ms of the mock log', async () => {
    const script = await bargeInScript();
    const mock = await startMockServer({ port: 0, protocol: 'openai', profile: 'model', unit_ms: 2000, behaviour: behaviourOf(script) });
    try {
      const { code, stderr, summary } = await conversationRun(mock, 'openai', script, 4, 9);
      expect(stderr).not.toMatch(/error/);
      expect(code).toBe(0);
      const sessions = mockLog(mock);
      const truncates = sessions.flat().filter((e) => e.kind === 'truncate');
      // A barge-in in every pass: truncated each time.
      expect(truncates.length).toBeGreaterThanOrEqual(4);
      for (const t of truncates) expect(Math.abs((t.audio_end_ms as number) - (t.heard_ms as number))).toBeLessThan(100);
      // The server interrupts itself (interrupt_response: true): no response.cancel, so nothing refused.
      expect(sessions.flat().filter((e) => e.kind === 'answer_end' && e.why === 'client_cancel')).toEqual([]);
      const b = summary.behaviour;
      expect(b.stop_latency_ms.count).toBeGreaterThanOrEqual(4);
      expect(Math.abs((b.stop_latency_ms.p50 as number) - median(behaviourDelays(mock.stats().behaviour?.sessions ?? []).stop_ms))).toBeLessThan(60);
      // The server's cancelled response.done is the cancel evidence.
      expect(b.cancel_latency_ms.count).toBeGreaterThanOrEqual(4);
    } finally {
      await mock.close();
    }
  });

  it('vllm-omni: acks the played ms (within 200 ms of the mock\'s own truth), and reads stop latency within 60 ms of the mock log', async () => {
    const script = await bargeInScript();
    const mock = await startMockServer({ port: 0, protocol: 'openai', openai: { flavor: 'vllm-omni' }, unit_ms: 1000, behaviour: behaviourOf(script) });
    try {
      // 8 sessions: about 3 acks each, of the answer heard before and during the barge-in.
      const { code, stderr, summary } = await conversationRun(mock, 'vllm-omni', script, 8, 9);
      expect(stderr).not.toMatch(/error/);
      expect(code).toBe(0);
      const sessions = mockLog(mock);
      const acks = sessions.flat().filter((e) => e.kind === 'playback_ack' && (e.played_ms as number) > 0);
      expect(acks.length).toBeGreaterThanOrEqual(20);
      // Within 200 ms of what played (received ms would be up to a whole 1 s unit ahead).
      for (const a of acks) expect(Math.abs((a.played_ms as number) - (a.heard_ms as number))).toBeLessThan(200);
      const b = summary.behaviour;
      expect(b.stop_latency_ms.count).toBeGreaterThanOrEqual(4);
      expect(Math.abs((b.stop_latency_ms.p50 as number) - median(behaviourDelays(mock.stats().behaviour?.sessions ?? []).stop_ms))).toBeLessThan(60);
      expect(b.cancel_latency_ms.count).toBeGreaterThanOrEqual(4);
    } finally {
      await mock.close();
    }
  });
});
