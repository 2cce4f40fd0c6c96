/* The native oracle: sglang-omni's trace contract, rule for rule */
export { checkNativeTrace, grantedProfile, parseTraceLines } from './native/native-check';
export type { NativeCheckOptions, ParsedTraceLines } from './native/native-check';
export type { NativeCheckMetrics, NativeCheckResult } from './native/native-replay';
