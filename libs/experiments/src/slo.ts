import { parseSlo as parseSloTerms, SloError, type SloTerm } from '@duplex-bench/results';
import { ExperimentError } from './experiment-error';

// The SLO figures and their judgement belong to the summary they read (libs/results); a sweep's
// --slo that does not read is its ExperimentError BAD_SLO, as before.
export { checkSlo, DEFAULT_SLO, SLO_FIGURES, sloFigure, termLabel } from '@duplex-bench/results';
export type { SloCheck, SloTerm } from '@duplex-bench/results';

/** `figure<=bound,figure=bound,…`; an ExperimentError (BAD_SLO) names the term that does not parse. */
export function parseSlo(text: string): SloTerm[] {
  try {
    return parseSloTerms(text);
  } catch (err) {
    if (err instanceof SloError) throw new ExperimentError('BAD_SLO', err.message);
    throw err;
  }
}
