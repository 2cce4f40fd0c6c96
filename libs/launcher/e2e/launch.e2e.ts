import { join } from 'node:path';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import { Launcher, type LaunchOptions } from '../src/launch';
import { planCpus } from '../src/cpu-plan';

jest.setTimeout(60_000);

const CHILD = join(__dirname, 'fixtures', 'child.ts');

function launcher(modes: string[], extra: Partial<LaunchOptions> = {}) {
  const lines: string[][] = modes.map(() => []);
  const l = new Launcher({
    module: CHILD,
    count: modes.length,
    args: (i) => [modes[i]],
    start_timeout_ms: 20_000,
    run_timeout_ms: 30_000,
    onStderr: (i, line) => lines[i].push(line),
    ...extra,
  });
  return { l, lines };
}

describe('Launcher', () => {
  it('starts every child at one common time on the shared clock', async () => {
    const { l, lines } = launcher(['ok', 'ok', 'ok']);
    const result = await l.run();
    expect(result.start_failure).toBeNull();
    expect(result.gate_s).not.toBeNull();
    for (const childLines of lines) expect(childLines).toContain(`gate ${result.gate_s}`);
    expect(result.children.map((c) => [c.ready, c.exit_code, c.failure])).toEqual([
      [true, 0, null],
      [true, 0, null],
      [true, 0, null],
    ]);
  });

  it('fails within the bound, naming the child and its reason, when one crashes before the gate', async () => {
    const { l } = launcher(['linger', 'crash', 'never-ready']);
    const t0 = Date.now();
    const result = await l.run();
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(result.start_failure).toEqual({
      index: 1,
      reason: 'exited before the start gate (1): cannot connect to ws://127.0.0.1:9/v1/realtime: ECONNREFUSED',
    });
    expect(result.gate_s).toBeNull();
    // The others were stopped, by PID.
    for (const c of result.children) expect(c.exit_code !== null || c.signal !== null).toBe(true);
  });

  it('gives up at the start timeout, on its injected timers, when a child never gets ready', async () => {
    // The start bound fires when the test says, not after 3 s of wall clock.
    let armed: (delay_ms: number) => void = () => undefined;
    const startBoundArmed = new Promise<number>((resolve) => (armed = resolve));
    const timers = new (class extends ManualTimers {
      override arm(delay_ms: number, fn: () => void, options?: { background?: boolean }): () => void {
        const cancel = super.arm(delay_ms, fn, options);
        armed(delay_ms);
        return cancel;
      }
    })();
    const { l } = launcher(['never-ready', 'never-ready'], { start_timeout_ms: 3000, timers });
    const running = l.run();
    expect(await startBoundArmed).toBe(3000);
    timers.fire();
    const result = await running;
    expect(result.start_failure).toEqual({ index: 0, reason: 'not ready within the start timeout (3 s)' });
    // Both were stopped on SIGTERM, before the kill grace (armed on the same timers) was needed.
    expect(result.children.map((c) => c.signal)).toEqual(['SIGTERM', 'SIGTERM']);
    expect(timers.pending).toEqual([]);
  });

  it('reports a child killed mid-run', async () => {
    const { l, lines } = launcher(['ok', 'linger']);
    const running = l.run();
    await new Promise<void>((resolve, reject) => {
      const bound = setTimeout(() => reject(new Error('child 1 never streamed')), 20_000);
      const poll = setInterval(() => {
        if (lines[1].includes('streaming')) {
          clearInterval(poll);
          clearTimeout(bound);
          resolve();
        }
      }, 20);
    });
    // Kill child 1, by its PID, as a crash would.
    process.kill(l.childPids()[1] as number, 'SIGKILL');
    const result = await running;
    expect(result.children[1].failure).toMatch(/^died mid-run \(SIGKILL\)/);
    expect(result.children[0].failure).toBeNull();
  });

  it('never blocks a child that sends while the parent is slow to read', async () => {
    const { l, lines } = launcher(['chatty']);
    const running = l.run();
    // Hold the parent's loop for 1.5 s once the child has started sending.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (l.readyChildren() === 1) {
          clearInterval(poll);
          const until = Date.now() + 1500;
          while (Date.now() < until) {
            // the parent reads nothing meanwhile
          }
          resolve();
        }
      }, 5);
    });
    const result = await running;
    expect(result.children[0].exit_code).toBe(0);
    const lag = Number(lines[0].find((x) => x.startsWith('maxlag'))?.split(' ')[1]);
    expect(lag).toBeLessThan(100);
  });
});

describe('planCpus', () => {
  it('puts the launcher and each child on cores of their own when there are enough', () => {
    const cores = [[0, 4], [1, 5], [2, 6], [3, 7]];
    expect(planCpus('auto', cores, 3)).toMatchObject({ parent: [0, 4], children: [[1, 5], [2, 6], [3, 7]], warning: null });
  });
  it('shares cores with a warning, not a failure, when there are too few', () => {
    const plan = planCpus('auto', [[0], [1]], 4);
    expect(plan.children).toEqual([[0], [1], [0], [1]]);
    expect(plan.parent).toBeNull();
    expect(plan.warning).toMatch(/4 processes on 2 physical core/);
  });
  it('does nothing when off or without topology', () => {
    expect(planCpus('off', [[0]], 2).children).toBeNull();
    expect(planCpus('auto', null, 2).warning).toMatch(/skipped/);
  });
});
