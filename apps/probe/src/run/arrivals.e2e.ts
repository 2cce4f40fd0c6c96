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

/** Erlang B(N, A) by its recurrence: B(0) = 1, B(n) = A·B(n−1) / (n + A·B(n−1)). */
function erlangB(servers: number, erlangs: number): number {
  let b = 1;
  for (let n = 1; n <= servers; n++) b = (erlangs * b) / (n + erlangs * b);
  return b;
}

describe('run --arrival-rate', () => {
  it('measures the blocking of a server with 8 slots at 8 Erlangs within its binomial interval of Erlang B(8, 8), and agrees with the mock exactly', async () => {
    expect(erlangB(8, 8)).toBeCloseTo(0.2356, 4);
    const mock = await startMockServer({ port: 0, max_sessions: 8 });
    try {
      // Poisson arrivals at 4/s with exponential 2 s sessions: 8 Erlangs offered to 8 slots. 40 s
      // draws about 160 arrivals, 144 of them after the 4 s warm-up (the server starts empty, which
      // lowers the blocking of the first few seconds); the 95% Wilson interval is then about ±0.07
      // around 0.24. That tells 8 Erlangs from 7 (B = 0.17) or 9 (B = 0.30), one Erlang off, and a
      // client that retried or delayed a refused arrival would block far less. The tolerance is the
      // interval the probe itself reports, not a guess. Seed 3 fixes the schedule and the durations.
      const { code, summary, stdout, stderr, dir } = await probe(mock.url, ['--arrival-rate', '4', '--session-duration', 'exp:2', '--run-for', '40', '--warmup-s', '4', '--seed', '3', '--allow-unqualified']);
      const a = summary.arrivals;
      if (!a?.steady) throw new Error(`no arrivals block: ${stderr}`);
      expect(code).toBe(0);
      expect(a).toMatchObject({ process: 'poisson', rate_per_s: 4, offered_erlangs: 8, client_skipped: 0, failed_to_open: 0 });
      expect(a.arrived).toBeGreaterThan(120);
      const [low, high] = a.steady.blocking_probability.ci95 ?? [1, 0];
      expect(low).toBeLessThanOrEqual(erlangB(8, 8));
      expect(high).toBeGreaterThanOrEqual(erlangB(8, 8));
      // The mock's own log of admissions agrees with the probe's counts exactly: every blocked
      // session one refusal (no retries by default), every started one an acceptance.
      const admissions = mock.stats().admissions;
      expect({ refused: admissions.refused, accepted: admissions.accepted }).toEqual({ refused: a.blocked, accepted: a.started });
      expect(a.started + a.blocked).toBe(a.arrived);
      expect(admissions.log.filter((e) => e.outcome === 'refused').every((e) => e.held >= 8)).toBe(true);
      // Each blocked session's trace holds its refusal as an admission record, the HTTP 503 it got.
      const traces = await Promise.all((await readdir(join(dir, SESSIONS_DIR))).map((id) => readFile(sessionFile(dir, id, 'trace'), 'utf8').catch(() => '')));
      const refusals = traces.flatMap((t) => t.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { direction: string; event: { http_status?: number; attempt?: number } })).filter((l) => l.direction === 'admission');
      expect(refusals).toHaveLength(a.blocked);
      expect(refusals.every((l) => l.event.http_status === 503 && l.event.attempt === 1)).toBe(true);
      expect(a.completed).toBe(a.started);
      // Latencies from the intended start, and the active sessions over time, never above the slots.
      expect(a.connect_ms.count).toBe(a.started);
      expect(a.handshake_ms.p50).toBeGreaterThan(0);
      const timeline = JSON.parse(await readFile(join(dir, 'timeline.json'), 'utf8')) as { active_sessions?: number[] };
      expect(Math.max(...(timeline.active_sessions ?? [0]))).toBeGreaterThanOrEqual(8);
      expect(stderr).toContain('8.00 Erlangs offered');
      // The memory figures name the high-water mark of sessions in flight that RSS follows: sampled once a second, never above the exact peak.
      const rss = summary.rss;
      expect(rss?.in_flight_peak).toBeGreaterThanOrEqual(1);
      expect(rss?.in_flight_peak).toBeLessThanOrEqual(a.peak_in_flight);
      expect(rss?.in_flight_peak_at_from).toBeLessThanOrEqual(rss?.in_flight_peak as number);
      expect(stdout).toMatch(new RegExp(`in flight at most ${rss?.in_flight_peak_at_from} by [0-9.]+ s, ${rss?.in_flight_peak} by the end`));
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
