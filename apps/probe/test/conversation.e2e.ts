import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWavAs, speechDir } from '@duplex-bench/audio';
import { startMockServer } from '@duplex-bench/mock-servers';
import type { TurnRecord } from '@duplex-bench/metrics';
import { probe } from './in-process.spec-helpers';
import { readSessionRows, type RunSummary } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';

jest.setTimeout(120_000);

import { conversationRun, mockSessions } from './conversation.spec-helpers';

describe('run --conversation against the native mock with behaviour knobs', () => {
  it('counts a 400 ms pause held and a 1,200 ms pause taken over by a model that takes the turn after 800 ms', async () => {
    const speech = speechDir();
    const dir = await mkdtemp(join(tmpdir(), 'pauses-'));
    const script = join(dir, 'pauses.yaml');
    await writeFile(
      script,
      [
        'name: pauses',
        'steps:',
        `  - say: ${join(speech, 'q3a.wav')}`,
        '  - silence_ms: 400',
        '    expect: hold',
        `  - say: ${join(speech, 'q3b.wav')}`,
        '  - listen: {until: model_done, max_s: 10}',
        `  - say: ${join(speech, 'q3a.wav')}`,
        '  - silence_ms: 1200',
        '    expect: hold',
        `  - say: ${join(speech, 'q3b.wav')}`,
        '  - listen: {until: model_done, max_s: 10}',
        '',
      ].join('\n'),
    );
    const mock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: script, respond_after_ms: 400, stop_after_ms: 200, takeover_after_ms: 800 } });
    try {
      const { code, turns } = await conversationRun(mock, script, 4, 22);
      expect(code).toBe(0);
      const pauses = turns.filter((t) => t.kind === 'pause' && t.pass === 0);
      const outcome = (step: number) => [...new Set(pauses.filter((t) => t.step === step).map((t) => t.outcome))];
      expect(outcome(1)).toEqual(['held']);
      expect(outcome(5)).toEqual(['took_over']);
    } finally {
      await mock.close();
    }
  });
});

describe('run --arrival-rate --conversation: each session as long as its conversation', () => {
  it('ends each arriving session where its script ends, once through, and takes the offered load from their measured length', async () => {
    const speech = speechDir();
    const dir = await mkdtemp(join(tmpdir(), 'arriving-conversation-'));
    const script = join(dir, 'one-turn.yaml');
    await writeFile(script, ['name: one-turn', 'steps:', `  - say: ${join(speech, 'q1.wav')}`, '  - listen: {until: model_done, max_s: 10}', ''].join('\n'));
    // 1,500 ms answers 400 ms after the turn: each session is q1, then about 0.4 + 1.5 + 0.5 s of listening, far short of its 10 s bound.
    const mock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: script, respond_after_ms: 400, answer_ms: 1500 } });
    try {
      const out = join(dir, 'run');
      const argv = ['run', '--url', mock.url, '--arrival-rate', '2', '--arrivals', 'constant', '--run-for', '3', '--conversation', script, '--output', out, '--json', '--quiet', '--allow-unqualified'];
      const { code, stdout, stderr } = await probe(argv);
      expect(stderr).not.toMatch(/error/);
      expect(code).toBe(0);
      const summary = JSON.parse(stdout.trim().split('\n').pop() as string) as RunSummary;
      const a = summary.arrivals;
      if (!a) throw new Error(`no arrivals block: ${stderr}`);
      expect(a).toMatchObject({ session_duration: 'conversation', arrived: 6, started: 6, completed: 6, blocked: 0 });
      const rows = await readSessionRows<SessionResult>(out);
      expect(rows).toHaveLength(6);
      const lengths_s = rows.map((r) => (r.packets_sent * 80) / 1000);
      // One pass each, ended by its listen's trigger, not by the bound or the end of the session.
      for (const r of rows) expect(r).toMatchObject({ completed: true, conversation: { passes: 1, steps: 2 } });
      const q1_s = (await readWavAs(join(speech, 'q1.wav'), 16000)).pcm.length / 2 / 16000;
      for (const s of lengths_s) {
        expect(s).toBeGreaterThan(q1_s + 1.9);
        expect(s).toBeLessThan(q1_s + 4);
      }
      const turns = (await readFile(join(out, 'turns.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as TurnRecord);
      expect(turns.filter((t) => t.kind === 'response' && t.outcome === 'answered')).toHaveLength(6);
      // Offered Erlangs from the sessions' measured mean length, as measurement_origin says.
      const mean_s = lengths_s.reduce((x, y) => x + y, 0) / lengths_s.length;
      expect(a.mean_session_s).toBeCloseTo(mean_s, 3);
      // offered_erlangs is the rate times mean_session_s as kept (3 places): up to 2 x 0.0005 from the exact mean's.
      expect(Math.abs(a.offered_erlangs - 2 * mean_s)).toBeLessThanOrEqual(0.0015);
      expect(a.measurement_origin.offered_erlangs).toContain('the 6 sessions that played the script to its end');
      // The mock answered each session once, and each answer was done before its session ended.
      expect(mockSessions(mock).map((s) => s.events.filter((e) => e.kind === 'answer_end').map((e) => (e.kind === 'answer_end' ? e.why : '')))).toEqual(Array(6).fill(['done']));
    } finally {
      await mock.close();
    }
  });
});
