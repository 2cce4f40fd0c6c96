import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STALL_MS } from '@duplex-bench/metrics';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import { runFile } from '@duplex-bench/results';
import { ProcessMeasures } from './process-measures';
import { ProcessSampler } from './process-sampler';

const FOOTER = { pids: [process.pid], interval_ms: 5, looks: 6, late_looks: 0, wall_s: 1, cpu_s: 0.01, cpu_cores: 0.01, ended_by: 'SIGTERM' };

/** A look at this process: `[t_s, pid, state, run_ms, wait_ms, wchan]`, as the sampler writes it. */
const look = (t_s: number, state: string, run_ms: number, wait_ms = 0, pid = process.pid) => JSON.stringify([t_s, pid, state, run_ms, wait_ms, '']);

describe('ProcessSampler', () => {
  let dir: string;
  let measures: ProcessMeasures;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'process-sampler-'));
    measures = new ProcessMeasures(80, new VirtualTime());
    // Nothing real moves the recorders this spec fills by hand.
    measures.stop();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('stalls', () => {
    it("gives each of this process's stalls its cause from the looks around it, times them from the gate, and keeps the sampler's account", async () => {
      // A stall of 100 ms ending at 10.2 s, on a CPU throughout; one ending at 20.2 s, mostly a GC pause.
      measures.loop.stalls.push({ end_s: 10.2, ms: 100 }, { end_s: 20.2, ms: 100 });
      measures.gc.pauses.push({ start_s: 20.11, ms: 80 });
      const lines = [look(10.09, 'R', 1000), look(10.15, 'R', 1055, 0, process.pid + 1), look(10.21, 'R', 1110), look(20.09, 'R', 2000), look(20.21, 'S', 2010), JSON.stringify({ sampler: FOOTER })];
      await writeFile(runFile(dir, 'sampler'), lines.join('\n') + '\n');
      const s = await ProcessSampler.stalls(dir, measures, 10);
      expect(s.threshold_ms).toBe(STALL_MS);
      expect(s.count).toBe(2);
      expect(s.by_cause).toMatchObject({ busy: 1, gc: 1, unsampled: 0 });
      expect(s.list.map((x) => [x.t_s, x.cause])).toEqual([
        [0.1, 'busy'],
        [10.1, 'gc'],
      ]);
      // Another process's look is not this one's.
      expect(s.list[0].evidence.samples).toBe(0);
      expect(s.sampler).toMatchObject(FOOTER);
    });

    it('without a sampler file, every stall is unsampled and there is no account', async () => {
      measures.loop.stalls.push({ end_s: 3, ms: 60 });
      const s = await ProcessSampler.stalls(dir, measures, 0);
      expect(s.by_cause.unsampled).toBe(1);
      expect(s.sampler).toBeNull();
    });

    describe("with a launcher's shared sampler, still running", () => {
      // Only the waits between reads are faked: the reads themselves are real file reads.
      beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'hrtime', 'performance', 'Date', 'setInterval', 'clearInterval'] }));
      afterEach(() => jest.useRealTimers());

      /** Lets the real reads run until the reader waits on its next 100 ms timer, or `over()`. */
      async function untilWaiting(over: () => boolean): Promise<void> {
        while (jest.getTimerCount() === 0 && !over()) await new Promise<void>((resolve) => setImmediate(resolve));
      }

      it('leaves its account to the launcher, and reads again until a look comes after the last stall', async () => {
        measures.loop.stalls.push({ end_s: 5.2, ms: 100 });
        const file = runFile(dir, 'sampler');
        await writeFile(file, `${look(5.09, 'R', 100)}\n`);
        let done = false;
        const reading = ProcessSampler.stalls(dir, measures, 5, true).finally(() => (done = true));
        await untilWaiting(() => done);
        expect(done).toBe(false);
        // The sampler writes its next look, after the stall; the next read finds it.
        await appendFile(file, `${look(5.3, 'R', 300)}\n${JSON.stringify({ sampler: FOOTER })}\n`);
        jest.advanceTimersByTime(100);
        const s = await reading;
        expect(s.list.map((x) => x.cause)).toEqual(['busy']);
        expect(s.sampler).toBeNull();
      });

      it('gives up after 2 s of reads without such a look, and attributes the stall from the looks it has', async () => {
        measures.loop.stalls.push({ end_s: 5.2, ms: 100 });
        // A look only 10 ms after the stall's end: not yet past it by 50 ms.
        await writeFile(runFile(dir, 'sampler'), `${look(5.09, 'R', 100)}\n${look(5.21, 'R', 220)}\n`);
        let done = false;
        const reading = ProcessSampler.stalls(dir, measures, 5, true).finally(() => (done = true));
        let waits = 0;
        for (; waits < 50; waits++) {
          await untilWaiting(() => done);
          if (done) break;
          jest.advanceTimersByTime(100);
        }
        expect(waits).toBe(20);
        expect((await reading).list.map((x) => x.cause)).toEqual(['busy']);
      });

      it('does not wait when the file already has a look after the last stall, or when there was no stall', async () => {
        await writeFile(runFile(dir, 'sampler'), `${look(1, 'R', 100)}\n`);
        expect((await ProcessSampler.stalls(dir, measures, 0, true)).count).toBe(0);
        measures.loop.stalls.push({ end_s: 0.5, ms: 60 });
        expect((await ProcessSampler.stalls(dir, measures, 0, true)).count).toBe(1);
        expect(jest.getTimerCount()).toBe(0);
      });
    });
  });

  it('starts the /proc sampler in a process of its own, and stop() ends it with SIGTERM, its own account written', async () => {
    const file = runFile(dir, 'sampler');
    const sampler = new ProcessSampler([process.pid], file, 5, 60);
    let exited = false;
    try {
      // Its looks are flushed every 100 ms: once one is in the file, its SIGTERM handler is in place.
      for (let i = 0; i < 500 && !(await readFile(file, 'utf8').catch(() => '')).includes('\n'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await sampler.stop()).toEqual({ code: 0, error: null });
      exited = true;
    } finally {
      if (!exited) await sampler.stop();
    }
    const rows = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as unknown);
    const footer = rows.at(-1) as { sampler: typeof FOOTER };
    expect(footer.sampler).toMatchObject({ pids: [process.pid], interval_ms: 5, ended_by: 'SIGTERM' });
    expect(footer.sampler.looks).toBe(rows.length - 1);
    expect(rows[0]).toEqual([expect.any(Number), process.pid, expect.any(String), expect.any(Number), expect.any(Number), expect.any(String)]);
    // What it wrote is what stalls() reads.
    expect((await ProcessSampler.stalls(dir, measures, 0)).sampler).toMatchObject({ ended_by: 'SIGTERM' });
  });
});
