import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
import { startMockServer } from '@duplex-bench/mock-servers';
import { readSessionRows, sessionFile, SESSIONS_DIR, type RunSummary } from '@duplex-bench/results';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';
import { probe } from './run-harness.spec-helpers';

jest.setTimeout(90_000);

describe('run --arrival-rate', () => {
  // Erlang B blocking itself is proved in virtual time (libs/run/src/arrivals/arrival-run.spec.ts);
  // this is the smoke over real sockets: a few seconds of arrivals, and the mock's own counts.
  it('counts each arrival the mock refused as blocked and each it accepted as started, exactly as the mock does', async () => {
    const mock = await startMockServer({ port: 0, max_sessions: 2 });
    try {
      // Poisson arrivals at 4/s of 1.5 s sessions on 2 slots (6 Erlangs): seed 3 draws 21 arrivals
      // in 4 s, the first four within 0.2 s, so the third and fourth find both slots held.
      const { code, summary, stderr, dir } = await probe(mock.url, ['--arrival-rate', '4', '--session-duration', 'fixed:1.5', '--run-for', '4', '--warmup-s', '1', '--seed', '3', '--allow-unqualified']);
      const a = summary.arrivals;
      if (!a) throw new Error(`no arrivals block: ${stderr}`);
      expect(code).toBe(0);
      expect(a).toMatchObject({ process: 'poisson', rate_per_s: 4, offered_erlangs: 6, client_skipped: 0, failed_to_open: 0 });
      expect(a.blocked).toBeGreaterThan(0);
      expect(a.started).toBeGreaterThan(0);
      // The mock's own log of admissions agrees with the probe's counts exactly: every blocked
      // session one refusal (no retries by default), every started one an acceptance.
      const admissions = mock.stats().admissions;
      expect({ refused: admissions.refused, accepted: admissions.accepted }).toEqual({ refused: a.blocked, accepted: a.started });
      expect(a.started + a.blocked).toBe(a.arrived);
      expect(admissions.log.filter((e) => e.outcome === 'refused').every((e) => e.held >= 2)).toBe(true);
      // Each blocked session's trace holds its refusal, the HTTP 503 it got, as its error: with no
      // retries there is no retried refusal to write as an admission record (sglang-omni's client's `admit`).
      const traces = await Promise.all((await readdir(join(dir, SESSIONS_DIR))).map((id) => readFile(sessionFile(dir, id, 'trace'), 'utf8').catch(() => '')));
      const lines = traces.flatMap((t) => t.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { direction: string; event: { message?: string } }));
      expect(lines.filter((l) => l.direction === 'admission')).toEqual([]);
      const refusals = lines.filter((l) => l.direction === 'error' && /^admission_refused: server refused the session with HTTP 503 1 times/.test(l.event.message ?? ''));
      expect(refusals).toHaveLength(a.blocked);
      expect(a.completed).toBe(a.started);
      // Latencies from the intended start, and the active sessions over time, never above the slots.
      expect(a.connect_ms.count).toBe(a.started);
      expect(a.handshake_ms.p50).toBeGreaterThan(0);
      const timeline = JSON.parse(await readFile(join(dir, 'timeline.json'), 'utf8')) as { active_sessions?: number[] };
      expect(Math.max(...(timeline.active_sessions ?? [0]))).toBeGreaterThanOrEqual(2);
      expect(stderr).toContain('6.00 Erlangs offered');
      // The memory figures name the high-water mark of sessions in flight that RSS follows: sampled once a second, never above the exact peak.
      // (Its slope, and the line printed with it, need 10 s of samples: longer than this run.)
      const rss = summary.rss;
      expect(rss?.in_flight_peak).toBeGreaterThanOrEqual(1);
      expect(rss?.in_flight_peak).toBeLessThanOrEqual(a.peak_in_flight);
      expect(rss?.in_flight_peak_at_from).toBeLessThanOrEqual(rss?.in_flight_peak as number);
    } finally {
      await mock.close();
    }
  });

  it('counts a session due while --max-in-flight are in flight as client_skipped, and keeps every finished session when interrupted', async () => {
    const mock = await startMockServer({ port: 0 });
    const dir = await mkdtemp(join(tmpdir(), 'probe-arrivals-'));
    const signals = new EventEmitter();
    let stderr = '';
    const io: RunIo = {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s), isTTY: false },
      signals,
      exitNow: (code) => {
        throw new Error(`exitNow(${code}) in a test`);
      },
      argv: [],
    };
    try {
      // Constant arrivals 0.25 s apart of 0.6 s sessions with at most 2 in flight: every third is due while two are.
      const opts = parseRunOptions(['--url', mock.url, '--output', dir, '--quiet', '--arrival-rate', '4', '--arrivals', 'constant', '--session-duration', 'fixed:0.6', '--run-for', '30', '--max-in-flight', '2']);
      const interrupt = setTimeout(() => signals.emit('SIGINT'), 3000);
      const code = await runCommand(opts, io);
      clearTimeout(interrupt);
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
      const a = summary.arrivals;
      if (!a) throw new Error(`no arrivals block: ${stderr}`);
      expect(code).toBe(130);
      expect(summary.interrupted).toBe(true);
      // No arrival after the interrupt: about 3 s of the 30 s schedule came due.
      expect(a.arrived).toBeGreaterThanOrEqual(8);
      expect(a.arrived).toBeLessThan(20);
      expect(a.client_skipped).toBeGreaterThan(0);
      expect(a.started + a.client_skipped).toBe(a.arrived);
      expect(a.peak_in_flight).toBe(2);
      // Every session that started has its record; those cut short by the stop say so.
      // Written as each session ended, one line each.
      const sessions = { sessions: await readSessionRows<{ id: string; completed: boolean; reason?: string }>(dir) };
      expect((await readFile(join(dir, 'sessions.jsonl'), 'utf8')).split('\n').filter(Boolean)).toHaveLength(a.started);
      expect(sessions.sessions).toHaveLength(a.started);
      expect(sessions.sessions.filter((s) => !s.completed).every((s) => s.reason === 'interrupted')).toBe(true);
      expect(sessions.sessions.filter((s) => s.completed).length).toBe(a.completed);
      expect(a.completed).toBeGreaterThan(0);
    } finally {
      await mock.close();
    }
  });
});
