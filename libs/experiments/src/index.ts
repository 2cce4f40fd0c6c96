export { checkSlo, DEFAULT_SLO, parseSlo, SLO_FIGURES, sloFigure, termLabel } from './slo';
export type { SloCheck, SloTerm } from './slo';
export { capacityOf, loadOf, perGpu, pointGauges, pooledBlocking, runSweep } from './sweep';
export type { PointVerdict, SweepFile, SweepPlan, SweepPoint, SweepRun, SweepRunArrivals, SweepSettings } from './sweep';
export { COMPARE_METRICS, parseArm, runCompare } from './compare';
export type { Arm, CompareFile, ComparePlan, CompareRun, MetricResult } from './compare';
export { bootstrapRatio, mannWhitneyP, median, seeded } from './statistics';
export type { ExperimentIo, InterruptWatch } from './experiment-io';
export type { PointExit, PointRunner } from './point-runner';

/* Error types */
export { ExperimentError } from './experiment-error';
export type { ExperimentErrorCode } from './experiment-error';
