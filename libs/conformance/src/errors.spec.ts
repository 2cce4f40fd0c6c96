import { ConformanceError } from './errors';

describe('ConformanceError', () => {
  it('is an Error that carries its code and the path it was given, and names itself', () => {
    const err = new ConformanceError('NO_TRACES', '/runs/a: no sessions/*/trace.jsonl', '/runs/a');
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'ConformanceError', code: 'NO_TRACES', path: '/runs/a', message: '/runs/a: no sessions/*/trace.jsonl' });
    expect(String(err)).toBe('ConformanceError: /runs/a: no sessions/*/trace.jsonl');
  });
});
