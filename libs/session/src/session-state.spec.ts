import { transition } from './session-state';

describe('transition', () => {
  it('walks the states of a complete session in order', () => {
    const walk = ['connecting', 'handshaking', 'ready', 'streaming', 'ending_input', 'draining', 'done'] as const;
    let s: Parameters<typeof transition>[0] = 'idle';
    for (const next of walk) s = transition(s, next);
    expect(s).toBe('done');
  });

  it('goes back to connecting after a refused admission, to closing on a fault, and nowhere from done', () => {
    expect(transition('handshaking', 'connecting')).toBe('connecting');
    expect(transition('streaming', 'closing')).toBe('closing');
    expect(() => transition('done', 'closing')).toThrow('session state done cannot go to closing');
    expect(() => transition('streaming', 'ready')).toThrow('session state streaming cannot go to ready');
  });
});
