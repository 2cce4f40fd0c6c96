import { Subject, take } from 'rxjs';
import { Fanout } from './fanout';

/** What a subscriber saw: values, then `error:E` or `complete`. */
function watch(fanout: Fanout<number> | Subject<number>, seen: string[], n = Infinity) {
  const source = fanout instanceof Fanout ? fanout.observable : fanout.asObservable();
  return (n === Infinity ? source : source.pipe(take(n))).subscribe({ next: (v) => seen.push(String(v)), error: (e) => seen.push(`error:${e}`), complete: () => seen.push('complete') });
}

// Every case runs on a Subject too: the fanout must behave as the Subject it replaces.
const MAKERS: [string, () => Fanout<number> | Subject<number>][] = [
  ['Fanout', () => new Fanout<number>()],
  ['Subject', () => new Subject<number>()],
];

describe('Fanout', () => {
  it.each(MAKERS)('hands each value to every subscriber in order, and the end to late ones (%s)', (_name, make) => {
    const f = make();
    const a: string[] = [];
    const b: string[] = [];
    watch(f, a);
    f.next(1);
    const sub = watch(f, b);
    f.next(2);
    sub.unsubscribe();
    f.next(3);
    f.error('boom');
    f.next(4);
    const late: string[] = [];
    watch(f, late);
    expect(a).toEqual(['1', '2', '3', 'error:boom']);
    expect(b).toEqual(['2']);
    expect(late).toEqual(['error:boom']);
  });

  it.each(MAKERS)('hands nothing more to a subscriber that one before it unsubscribed during a value, and completes once (%s)', (_name, make) => {
    const f = make();
    const first: string[] = [];
    const second: string[] = [];
    const source = f instanceof Fanout ? f.observable : f.asObservable();
    source.subscribe({ next: (v) => (first.push(String(v)), v === 7 && sub.unsubscribe()), complete: () => first.push('complete') });
    const sub = watch(f, second);
    f.next(7);
    f.next(8);
    f.complete();
    f.complete();
    const late: string[] = [];
    watch(f, late);
    expect(first).toEqual(['7', '8', 'complete']);
    expect(second).toEqual([]);
    expect(late).toEqual(['complete']);
  });

  it.each(MAKERS)('lets go of each subscriber that unsubscribes, however many come and go (%s)', (_name, make) => {
    const f = make();
    const kept = watch(f, []);
    for (let i = 0; i < 1000; i++) watch(f, []).unsubscribe();
    expect(f.observed).toBe(true);
    kept.unsubscribe();
    expect(f.observed).toBe(false);
  });
});
