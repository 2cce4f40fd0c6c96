import { lastValueFrom, of, Subject, toArray } from 'rxjs';
import { runStages } from './stages';

/** `n` stages that note each value they see, by stage: '2:7' is stage 2 seeing 7. */
function noting(n: number, calls: string[]): Array<(v: number) => void> {
  return Array.from({ length: n }, (_, i) => (v: number) => void calls.push(`${i}:${v}`));
}

describe('runStages: one operator for a path of stages', () => {
  // 4 is the send path's count, 5 a conversation's receive path; the others take the general loop.
  it.each([0, 1, 3, 4, 5, 6])('with %i stages, runs each value through every stage once, in order, and passes it on unchanged', async (n) => {
    const calls: string[] = [];
    const out = await lastValueFrom(of(7, 8).pipe(runStages(noting(n, calls)), toArray()));
    expect(out).toEqual([7, 8]);
    const order = Array.from({ length: n }, (_, i) => i);
    expect(calls).toEqual([...order.map((i) => `${i}:7`), ...order.map((i) => `${i}:8`)]);
  });

  it.each([3, 4, 5])('with %i stages, a stage that throws skips the stages after it and errors the stream: no later value is run', (n) => {
    const calls: string[] = [];
    const stages = noting(n, calls);
    const second = stages[1];
    stages[1] = (v) => {
      second(v);
      if (v === 2) throw new Error(`stage 1 failed on ${v}`);
    };
    const input = new Subject<number>();
    const out: number[] = [];
    let failed: unknown = null;
    input.pipe(runStages(stages)).subscribe({ next: (v) => out.push(v), error: (err: unknown) => (failed = err) });
    input.next(1);
    input.next(2);
    input.next(3);
    expect(out).toEqual([1]);
    expect((failed as Error).message).toBe('stage 1 failed on 2');
    expect(calls.filter((c) => c.endsWith(':2'))).toEqual(['0:2', '1:2']);
    expect(calls.filter((c) => c.endsWith(':3'))).toEqual([]);
  });
});
