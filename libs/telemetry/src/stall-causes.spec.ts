import type { ThreadSample } from './proc-sample';
import { attributeStalls, stallsSummary } from './stall-causes';
import { schedstatOf, stateOf } from './proc-sample';

/** Looks every 5 ms from t0 to t1 with a state and per-look run/wait increments (ms). */
function looks(t0: number, t1: number, state: string, run_per: number, wait_per: number, wchan = '', base = { run: 0, wait: 0 }): ThreadSample[] {
  const out: ThreadSample[] = [];
  let run = base.run;
  let wait = base.wait;
  for (let t = t0; t <= t1 + 1e-9; t += 0.005) {
    out.push({ t_s: t, pid: 1, state, run_ms: run, wait_ms: wait, wchan });
    run += run_per;
    wait += wait_per;
  }
  return out;
}

describe('attributeStalls', () => {
  const stall = [{ end_s: 10.3, ms: 200 }]; // held over [10.1, 10.3]
  it('names a GC storm when pauses cover half the stall, before anything else', () => {
    const [a] = attributeStalls(stall, [{ start_s: 10.12, ms: 150 }], looks(10, 10.4, 'R', 5, 0));
    expect(a).toMatchObject({ cause: 'gc', evidence: { gc_ms: 150 } });
  });
  it('names the disk when the loop thread is in state D in a fifth of the looks, with the kernel function', () => {
    const [a] = attributeStalls(stall, [], [...looks(10, 10.2, 'R', 1, 0), ...looks(10.205, 10.4, 'D', 0, 0, 'folio_wait_bit_common', { run: 41, wait: 0 })]);
    expect(a).toMatchObject({ cause: 'disk_wait', evidence: { wchan: ['folio_wait_bit_common'] } });
  });
  it('names a CPU wait from the run-queue delay across the stall, even with no look inside it', () => {
    const [a] = attributeStalls(stall, [], [{ t_s: 10.09, pid: 1, state: 'R', run_ms: 100, wait_ms: 50, wchan: '' }, { t_s: 10.31, pid: 1, state: 'R', run_ms: 102, wait_ms: 260, wchan: '' }]);
    expect(a).toMatchObject({ cause: 'cpu_wait', evidence: { samples: 0, wait_ms: 210 } });
  });
  it('names a busy loop when the thread ran through the stall, a kernel sleep otherwise, and says when nothing was seen', () => {
    expect(attributeStalls(stall, [], looks(10, 10.4, 'R', 5, 0))[0].cause).toBe('busy');
    expect(attributeStalls(stall, [], looks(10, 10.4, 'S', 0.1, 0, 'futex_wait_queue'))[0].cause).toBe('blocked');
    expect(attributeStalls(stall, [], [])[0].cause).toBe('unsampled');
  });
  it('takes the largest share: a thread that ran 45% and queued 15% was busy; runnable but neither running nor queued is unaccounted', () => {
    expect(attributeStalls(stall, [], looks(10, 10.4, 'R', 2.25, 0.75))[0].cause).toBe('busy');
    expect(attributeStalls(stall, [], looks(10, 10.4, 'R', 0.5, 0.5))[0].cause).toBe('unaccounted');
  });
  it('says unsampled when the looks around a stall are too far apart to tell (the sampler itself was held)', () => {
    const short = [{ end_s: 10.16, ms: 60 }];
    const far = [{ t_s: 10.0, pid: 1, state: 'R', run_ms: 0, wait_ms: 0, wchan: '' }, { t_s: 10.3, pid: 1, state: 'R', run_ms: 60, wait_ms: 5, wchan: '' }];
    expect(attributeStalls(short, [], far)[0].cause).toBe('unsampled');
  });
  it('counts causes and times stalls from the gate', () => {
    const s = stallsSummary(attributeStalls(stall, [], looks(10, 10.4, 'R', 5, 0)), 50, null, 10);
    expect(s).toMatchObject({ count: 1, by_cause: { busy: 1, gc: 0 }, list: [{ t_s: 0.1, cause: 'busy' }], sampler: null });
  });
});

describe('/proc readers', () => {
  it('reads the state after a command name with spaces and parentheses, and schedstat in ms', () => {
    expect(stateOf('1234 (node (x) y) D 1 2 3')).toBe('D');
    expect(schedstatOf('1500000 250000000 7\n')).toEqual({ run_ms: 1.5, wait_ms: 250 });
  });
});
