import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '@duplex-bench/cli';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { startFaultyMock, type MockFault } from '@duplex-bench/mock-servers/testing';
import { probe } from '../run/run-harness.spec-helpers';
import type { CheckReport } from '@duplex-bench/conformance';
import { checkCommand, parseCheckOptions } from './check-command';

jest.setTimeout(90_000);

async function check(path: string, flags: string[] = []): Promise<{ code: number; stdout: string; report: CheckReport | null; out: string }> {
  let stdout = '';
  const out = join(await mkdtemp(join(tmpdir(), 'probe-check-')), 'check.json');
  const code = await checkCommand(parseCheckOptions([path, '--output', out, ...flags]), { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => true } });
  const report = await readFile(out, 'utf8').then((t) => JSON.parse(t) as CheckReport, () => null);
  return { code, stdout, report, out };
}

const RUN = (seconds: string) => ['--concurrency', '2', '--duration', seconds, '--trace', 'full', '--keep-traces'];

describe('probe check: the mock and the probe against the native contract', () => {
  // Inputs that are and are not a multiple of the unit (80 ms and 1 s): 10.0 s and 10.5 s.
  const cases: Array<['nemotron' | 'minicpmo', string]> = [
    ['nemotron', '10'],
    ['nemotron', '10.5'],
    ['minicpmo', '10'],
    ['minicpmo', '10.5'],
  ];

  it('passes traces of both model profiles for 10.0 s and 10.5 s of input, each held to the profile its grant states', async () => {
    // Four runs at once: the contract is about order and content, not timing.
    const mocks: MockServer[] = await Promise.all(cases.map(([profile]) => startMockServer({ port: 0, profile, model: { ttfp_ms: 100 } })));
    try {
      const runs = await Promise.all(cases.map(([, seconds], i) => probe(mocks[i].url, RUN(seconds))));
      for (const [i, run] of runs.entries()) {
        expect(run.code).toBe(0);
        const { code, report, stdout } = await check(run.dir);
        expect(stdout).toMatch(/2 session\(s\): 2 pass, 0 fail, 0 not exercised/);
        expect(code).toBe(0);
        for (const r of report?.results ?? []) {
          expect(r).toMatchObject({ status: 'pass', violations: [], profile: cases[i][0], profile_source: 'grant' });
          expect((r.metrics as { input_audio_s: number }).input_audio_s).toBeCloseTo(Number(cases[i][1]), 9);
        }
      }
    } finally {
      await Promise.all(mocks.map((m) => m.close()));
    }
  });

  it('fails a trace held to the other profile, and says which rules broke', async () => {
    const mock = await startMockServer({ port: 0, profile: 'minicpmo', model: { ttfp_ms: 100 } });
    try {
      const run = await probe(mock.url, RUN('2.5'));
      const { code, report } = await check(join(run.dir, 'sessions', 's0', 'trace.jsonl'), ['--profile', 'nemotron']);
      expect(code).toBe(1);
      expect(report?.fail).toBe(1);
      expect(report?.results[0].violations).toEqual(expect.arrayContaining([expect.stringMatching(/^unsupported capability: native_unit_ms/)]));
    } finally {
      await mock.close();
    }
  });

  // A server that breaks a rule yet ends its sessions: the probe completes, `check` catches it.
  const broken: Array<[MockFault['action'], RegExp]> = [
    ['padded_tail', /drained consumed duration mismatch/],
    ['drained_first', /response\.output_audio\.done after drain|completed terminal after the drain receipt/],
  ];
  it.each(broken)('catches a server that breaks the contract (%s)', async (action, violation) => {
    const mock = await startFaultyMock({ after_appends: 1, action });
    try {
      const run = await probe(mock.url, RUN('1.3'));
      expect(run.summary.sessions.completed).toBe(2);
      const { code, report } = await check(run.dir);
      expect(code).toBe(1);
      expect(report?.fail).toBe(2);
      expect(report?.results[0].violations).toEqual(expect.arrayContaining([expect.stringMatching(violation)]));
    } finally {
      await mock.close();
    }
  });

  it('catches failed sessions: their error records and the server error they ended on', async () => {
    const mock = await startFaultyMock({ after_appends: 2, action: 'refuse_appends' });
    try {
      const run = await probe(mock.url, RUN('1'));
      const { code, report } = await check(run.dir);
      expect(code).toBe(1);
      const v = report?.results[0].violations ?? [];
      expect(v).toEqual(expect.arrayContaining([expect.stringMatching(/^client error: server_error: server error input_rejected/), expect.stringMatching(/^server error: code=input_rejected/)]));
    } finally {
      await mock.close();
    }
  });

  it('says so when the traces keep audio as byte counts (--trace events)', async () => {
    const mock = await startMockServer({ port: 0 });
    try {
      const run = await probe(mock.url, ['--concurrency', '1', '--duration', '0.5', '--trace', 'events', '--keep-traces']);
      const { code, report } = await check(run.dir);
      expect(code).toBe(1);
      expect(report?.results[0].violations[0]).toMatch(/--trace events.*--trace full/);
    } finally {
      await mock.close();
    }
  });

  it('reads a trace of any tool that writes the same line shape, and reports lines that are not JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-check-'));
    const file = join(dir, 'trace.jsonl');
    await writeFile(file, '{"direction":"receive","time_s":1,"event":{"type":"session.created","event_id":"a","session":{"id":"x"}}}\nnot json\n');
    const { code, report } = await check(file);
    expect(code).toBe(1);
    expect(report?.results[0]).toMatchObject({ profile: null, profile_source: 'none', status: 'fail' });
    expect(report?.results[0].violations).toEqual(expect.arrayContaining([expect.stringMatching(/^line 2/), expect.stringMatching(/no known profile/)]));
  });

  it('refuses a path that holds no traces, as usage', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-check-'));
    await expect(check(dir)).rejects.toThrow(UsageError);
    await expect(check(join(dir, 'missing'))).rejects.toThrow(UsageError);
    expect(() => parseCheckOptions([])).toThrow(UsageError);
    expect(() => parseCheckOptions([dir, '--profile', 'other'])).toThrow(UsageError);
  });
});
