import { EXIT } from '@duplex-bench/cli';
import { checkSlo, sloFigure, type RunSummary, type SloTerm } from '@duplex-bench/results';
import { abortLine, type SloAbort } from './slo-watch';

/** A run judged on its own SLO (`run --slo`): the summary's block, and the line that says it. */
export interface SloVerdict {
  block: NonNullable<RunSummary['slo']>;
  /** "SLO FAILED: ttfp_p99_ms<=1000 (TTFP p99 1234.5), incomplete=0 (2)" or "slo: every term held: …". */
  line: string;
}

const figure = (value: number | null) => (value === null ? 'no figure' : String(Math.round(value * 1000) / 1000));

/**
 * Each term against the run's summary: a figure the run does not have fails its term (as the sweep
 * judges it). A run `--abort-on-fail` ended early failed its SLO whatever its summary's figures say.
 */
export function judgeSlo(terms: SloTerm[], summary: RunSummary, aborted: SloAbort | null = null): SloVerdict {
  const checks = checkSlo(terms, summary);
  const passed = aborted === null && checks.every((c) => c.ok);
  const said = checks.map((c, i) => ({ ok: c.ok, text: `${c.term} (${sloFigure(terms[i].figure)?.label ?? terms[i].figure} ${figure(c.value)})` }));
  const failed = said.filter((t) => !t.ok).map((t) => t.text);
  const early = aborted ? `ended early on ${abortLine(aborted)}${failed.length > 0 ? '; at the end: ' : ''}` : '';
  return {
    block: { terms: checks, passed, ...(aborted ? { aborted } : {}) },
    line: passed ? `slo: every term held: ${said.map((t) => t.text).join(', ')}` : `SLO FAILED: ${early}${failed.join(', ')}`,
  };
}

/**
 * The exit status with the SLO judged: a failed term makes a run that would exit 0 exit 4; a run
 * that failed (1), was interrupted (130) or missed its cadence (3) keeps its own status first. A
 * run its SLO ended early (`--abort-on-fail`) exits 4 unless it failed or a signal also came.
 */
export function exitWithSlo(code: number, slo: SloVerdict | null, signalled = false): number {
  if (slo?.block.aborted && code === EXIT.interrupted && !signalled) return EXIT.slo_failed;
  return code === EXIT.ok && slo !== null && !slo.block.passed ? EXIT.slo_failed : code;
}
