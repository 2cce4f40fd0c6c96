import { RunInputError } from './input-error';

describe('RunInputError', () => {
  it('is an Error named RunInputError that carries its code and the message naming the flag', () => {
    const err = new RunInputError('BAD_PACKET_MS', '--packet-ms 7 is not a whole number of samples at 16000 Hz');
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(RunInputError);
    expect(err.name).toBe('RunInputError');
    expect(err.code).toBe('BAD_PACKET_MS');
    expect(err.message).toBe('--packet-ms 7 is not a whole number of samples at 16000 Hz');
    expect(String(err)).toBe('RunInputError: --packet-ms 7 is not a whole number of samples at 16000 Hz');
  });

  it('keeps a stack, so an app that prints it shows where the input was refused', () => {
    expect(new RunInputError('BAD_DATASET', 'x').stack).toMatch(/RunInputError: x/);
  });
});
