import { NEMOTRON, outputUnit, nativeTrace, check, eventOf, expectFailure } from './native-trace.spec-helpers';

describe('checkNativeTrace: base64 as Python 3.11-3.12 validates it', () => {
  const withDelta = (delta: string) => {
    const trace = nativeTrace();
    eventOf(trace, 'response.output_audio.delta').delta = delta;
    return check(trace);
  };
  const output = outputUnit(NEMOTRON); // 3,528 bytes: whole quads, no padding

  it('passes stray padding after a whole quad, which b64decode(validate=True) ignores', () => {
    expect(withDelta(output + '==').status).toBe('pass');
  });

  it.each([
    ['a line break', `${output.slice(0, 8)}\n${output.slice(8)}`],
    ['the URL-safe alphabet', output.slice(0, -4) + '-_AA'],
    ['data after padding', output.slice(0, -4) + 'AA==AAAA'],
    ['leading padding', '=' + output],
    ['missing padding', output + 'AA'],
    ['non-ASCII text', output.slice(0, -4) + 'AAé='],
  ])('fails %s', (_name, delta) => {
    expectFailure(withDelta(delta), 'delta is not valid base64');
  });
});
