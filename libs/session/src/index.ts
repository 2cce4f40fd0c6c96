/* One session: its pipeline (sends, receive readers, response and turn tracking) and its context */
export { admissionBackoffMs, admissionRefusal, NATIVE_ADMISSION, RealtimeSession, SendBarrier, reasonOf } from './realtime-session';
export type { AdmissionPolicy, SessionContext, SessionResult } from './realtime-session';

/* Traces graded against the dialects' contracts */
export { checkTraceFile, checkTraces, runProtocol, traceFiles } from './check-traces';
export type { CheckReport, SessionCheck } from './check-traces';
export { checkOpenAITrace, checkVllmOmniTrace } from './dialect-rules';
export type { DialectRulesResult } from './dialect-rules';
