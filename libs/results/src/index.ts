/* The run directory: the figures a run writes, read back and pooled */
export { buildSummary, duplexMetrics, LOCKSTEP_ORIGIN, MEASUREMENT_ORIGIN, UNIT_ORIGIN, unitSummary, vllmOmniFigures } from './summary';
export type { DuplexAggregate, DuplexSession, LockstepFigures, PacingMode, ResponseFigures, RunSummary, SummaryInputs, UnitFigures, VllmOmniFigures } from './summary';
export { buildMergedSummary, mergeChildren, mergeDuplex, pooledDuplexSessions, readRunForMerge, shiftRun, steadyFrom } from './merge-runs';
export type { MergedSummary, RunForMerge } from './merge-runs';
export { runDirsOf, runDirsOfAll } from './run-dirs';

/* Error types */
export { RunDirError } from './run-dirs';
export { ResultsInputError } from './input-error';
export type { ResultsInputCode } from './input-error';
