import { withoutFlags } from './child-args';

describe('withoutFlags', () => {
  it('drops each named flag with its value, written apart or joined, and keeps the rest in order', () => {
    expect(withoutFlags(['--url', 'u', '--rate', '5', '--max-tokens', '8', '--seed=3', '--x', 'y', '--rate', '6'], ['rate', 'seed'])).toEqual(['--url', 'u', '--max-tokens', '8', '--x', 'y']);
  });

  it('leaves a flag that only starts like a named one, and a value that looks like one', () => {
    expect(withoutFlags(['--rate-limit', '2', '--model', '--rate'], ['rate'])).toEqual(['--rate-limit', '2', '--model']);
    expect(withoutFlags(['--model', 'rate', 'x'], ['rate'])).toEqual(['--model', 'rate', 'x']);
  });
});
