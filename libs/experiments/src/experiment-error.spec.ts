import { parseArm } from './compare';
import { ExperimentError } from './experiment-error';
import { parseSlo } from './slo';

/** What `fn` threw. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('nothing thrown');
}

describe('ExperimentError', () => {
  it('is an Error with its name, its code and the message naming the flag', () => {
    const err = new ExperimentError('BAD_SLO', '--slo: unknown figure "ttfp"');
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(ExperimentError);
    expect(err).toMatchObject({ name: 'ExperimentError', code: 'BAD_SLO', message: '--slo: unknown figure "ttfp"' });
    expect(String(err)).toBe('ExperimentError: --slo: unknown figure "ttfp"');
    expect(err.stack).toMatch(/^ExperimentError: --slo: unknown figure "ttfp"\n/);
  });

  it("is what the experiments' own checks throw, with the code of the setting at fault, for the app to map to an exit status", () => {
    const slo = thrownBy(() => parseSlo('ttfp_p99_ms<<1000'));
    expect(slo).toBeInstanceOf(ExperimentError);
    expect(slo).toMatchObject({ code: 'BAD_SLO', message: expect.stringMatching(/^--slo: /) });
    const arm = thrownBy(() => parseArm('no-equals-sign'));
    expect(arm).toBeInstanceOf(ExperimentError);
    expect(arm).toMatchObject({ code: 'BAD_ARM', message: expect.stringMatching(/^--arm /) });
  });
});
