export { RealtimeSession, SendBarrier, reasonOf } from './realtime-session';
export type { SessionContext, SessionResult } from './realtime-session';
export { toAppendFrames } from './operators';
export { addResponseEvents } from './response-events';
export { ProcessMeasures } from './process-measures';
export { buildSummary, duplexMetrics, MEASUREMENT_ORIGIN } from './summary';
export type { RunSummary, DuplexAggregate, DuplexSession, ResponseFigures, SummaryInputs } from './summary';
export { GrantLog } from './grant-record';
export type { GrantRecord } from './grant-record';
