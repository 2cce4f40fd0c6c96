import { ExperimentError } from './experiment-error';
import { parseSlo } from './slo';

describe("a sweep's --slo", () => {
  it('reads terms as the summary judges them', () => {
    expect(parseSlo('incomplete=0,ttfp_p99_ms<=1000').map((t) => [t.figure, t.op, t.bound])).toEqual([
      ['incomplete', '=', 0],
      ['ttfp_p99_ms', '<=', 1000],
    ]);
  });

  it('is an ExperimentError BAD_SLO naming the term when one does not read', () => {
    let thrown: unknown;
    try {
      parseSlo('incomplete=0,ttfp<=3');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ExperimentError);
    expect(thrown).toMatchObject({ code: 'BAD_SLO', message: expect.stringMatching(/^--slo: unknown figure "ttfp"/) });
  });
});
