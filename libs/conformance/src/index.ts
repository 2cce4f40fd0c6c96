/* The native oracle: sglang-omni's trace contract, rule for rule */
export { checkNativeTrace, grantedProfile, parseTraceLines } from './native/native-check';
export type { NativeCheckOptions, ParsedTraceLines } from './native/native-check';
export type { NativeCheckMetrics, NativeCheckResult } from './native/native-replay';

/* The other dialects: the rules written so far */
export { checkOpenAITrace, checkVllmOmniTrace } from './dialect-rules';
export type { DialectRulesResult } from './dialect-rules';
export { checkLegacyTrace, LegacyReplay } from './legacy-rules';
export type { LegacyCheckMetrics, LegacyCheckOptions, LegacyCheckResult } from './legacy-rules';

/* A run's traces graded by the protocol it spoke */
export { checkTraceFile, checkTraces, runProtocol, traceFiles } from './check-traces';
export type { CheckReport, SessionCheck } from './check-traces';

/* Error types */
export { ConformanceError } from './errors';
export type { ConformanceErrorCode } from './errors';
