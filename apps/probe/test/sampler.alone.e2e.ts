import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import type { RunSummary } from '@duplex-bench/results';
import { runBounded } from './spawn.spec-helpers';

// Each stall must have the cause the test made (a CPU hog, a GC, a disk wait), and no other: run
// alone, with no other test file beside them (jest.e2e-alone.config.ts).
jest.setTimeout(90_000);

/** The built kit: the sampler is a process of its own, started from dist/sampler.js. */
const DIST = join(__dirname, '..', '..', '..', 'dist', 'duplex-bench.js');
const linux = process.platform === 'linux';
/** A CPU hog that takes the probe's CPU needs a real-time class and pinning (root, chrt and taskset). */
const canStarve = linux && spawnSync('chrt', ['-f', '10', 'taskset', '-c', '0', 'true']).status === 0;
if (linux && !canStarve) process.stderr.write('sampler: the cpu_wait case is skipped: `chrt -f 10 taskset -c 0 true` fails here (needs root and util-linux)\n');

/** A 4 s run with --sampler and `flags`, pinned to CPU `pin` when given; `during` runs beside it. */
async function stalls(mock: MockServer, flags: string[], o: { pin?: string; during?: () => Promise<void> } = {}): Promise<NonNullable<RunSummary['stalls']>> {
  const out = await mkdtemp(join(tmpdir(), 'probe-sampler-'));
  const args = [DIST, 'run', '--url', mock.url, '--concurrency', '4', '--duration', '4', '--output', out, '--quiet', '--sampler', '--allow-unqualified', ...flags];
  const run = o.pin ? runBounded('taskset', ['-c', o.pin, process.execPath, ...args], { bound_ms: 60_000, label: 'duplex-bench' }) : runBounded(process.execPath, args, { bound_ms: 60_000, label: 'duplex-bench' });
  await o.during?.();
  const exit = await run;
  expect(exit).toMatchObject({ code: 0 });
  const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
  if (!summary.stalls) throw new Error(`no stalls block: ${exit.stderr}`);
  return summary.stalls;
}

/**
 * The stall the test made: the longest one after the start. A GC stall's heap is built before the
 * sessions, a stall of its own (about 1 s here, before the sampler's first look) that is longer than
 * the 300 ms made, so the stalls before the start (t_s < 0) are left out.
 */
const longest = (s: NonNullable<RunSummary['stalls']>) => [...s.list].filter((x) => x.t_s >= 0).sort((a, b) => b.ms - a.ms)[0];

(linux ? describe : describe.skip)('run --sampler: each loop stall over 50 ms gets its cause', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(async () => {
    await mock?.close();
  });

  it('a busy loop is busy: the thread ran through it', async () => {
    const s = await stalls(mock, ['--inject-stall-ms', '300', '--inject-stall-kind', 'busy']);
    const stall = longest(s);
    expect(stall).toMatchObject({ cause: 'busy' });
    expect(stall.ms).toBeGreaterThan(250);
    expect(stall.evidence.run_ms).toBeGreaterThan(0.5 * (stall.evidence.span_ms ?? Infinity));
    // The sampler looked every 5 ms and states its own CPU, apart from the probe's.
    expect(s.sampler).toMatchObject({ interval_ms: 5, ended_by: 'SIGTERM' });
    expect(s.sampler?.looks).toBeGreaterThan(400);
    expect(s.sampler?.cpu_cores).toBeGreaterThan(0);
  });

  it('a GC storm is gc: perf_hooks pauses cover it', async () => {
    const stall = longest(await stalls(mock, ['--inject-stall-ms', '300', '--inject-stall-kind', 'gc']));
    expect(stall).toMatchObject({ cause: 'gc' });
    expect(stall.evidence.gc_ms).toBeGreaterThan(0.5 * stall.ms);
  });

  it('writes flushed to the device are disk_wait, with the kernel function the loop waited in', async () => {
    const stall = longest(await stalls(mock, ['--inject-stall-ms', '300', '--inject-stall-kind', 'disk']));
    expect(stall).toMatchObject({ cause: 'disk_wait' });
    expect(stall.evidence.states.D).toBeGreaterThanOrEqual(2);
    expect(stall.evidence.wchan.length).toBeGreaterThan(0);
  });

  (canStarve ? it : it.skip)("a real-time hog on the probe's CPU is cpu_wait: the run-queue delay covers the stall", async () => {
    // The probe on CPU 1; about 1.5 s into its run (after its start-up), a SCHED_FIFO process spins on CPU 1 for 600 ms:
    // long enough to stand out from whatever else a busy shared host makes the loop wait for (a CI run saw a
    // 400 ms hog lose to another stall once).
    const s = await stalls(mock, [], {
      pin: '1',
      during: async () => {
        await new Promise((r) => setTimeout(r, 2500));
        spawnSync('chrt', ['-f', '20', 'taskset', '-c', '1', process.execPath, '-e', 'const t = Date.now(); while (Date.now() - t < 600) {}'], { timeout: 10_000 });
      },
    });
    const stall = longest(s);
    expect({ cause: stall.cause, stalls: s.list.map((x) => `${x.t_s}s ${x.ms}ms ${x.cause}`) }).toMatchObject({ cause: 'cpu_wait' });
    expect(stall.evidence.wait_ms).toBeGreaterThan(0.5 * (stall.evidence.span_ms ?? Infinity));
  });

  it('under --processes, one sampler watches every child; each child\'s stall gets its cause, pooled in the summary', async () => {
    const out = await mkdtemp(join(tmpdir(), 'probe-sampler-procs-'));
    const exit = await runBounded(
      process.execPath,
      [DIST, 'run', '--url', mock.url, '--processes', '2', '--concurrency', '2', '--duration', '4', '--output', out, '--quiet', '--sampler', '--inject-stall-ms', '300', '--allow-unqualified', '--cpu-affinity', 'off'],
      { bound_ms: 90_000, label: 'duplex-bench' },
    );
    expect(exit).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
    const s = summary.stalls;
    if (!s) throw new Error(`no stalls block: ${exit.stderr}`);
    // One sampler, two processes: its account names both PIDs.
    expect(s.sampler?.pids).toHaveLength(2);
    for (const p of ['p0', 'p1']) {
      const mine = s.list.filter((x) => x.process === p).sort((a, b) => b.ms - a.ms)[0];
      expect(mine).toMatchObject({ cause: 'busy' });
      expect(mine.ms).toBeGreaterThan(250);
    }
  });
});
