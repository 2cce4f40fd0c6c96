import { entryModule } from '@duplex-bench/launcher';

export { admissionBackoffMs, admissionRefusal, NATIVE_ADMISSION, RealtimeSession, SendBarrier, reasonOf } from './realtime-session';
export type { AdmissionPolicy, SessionContext, SessionResult } from './realtime-session';
export { addResponseEvents } from './response-events';
export { ProcessMeasures } from './process-measures';
export { buildSummary, duplexMetrics, LOCKSTEP_ORIGIN, MEASUREMENT_ORIGIN, UNIT_ORIGIN, unitSummary, vllmOmniFigures } from './summary';
export type { LockstepFigures, PacingMode, RunSummary, DuplexAggregate, DuplexSession, ResponseFigures, SummaryInputs, UnitFigures, VllmOmniFigures } from './summary';
export { GrantLog } from './grant-record';
export type { GrantRecord } from './grant-record';

/* Recording: samples kept one by one, resumable, post-processed in a pool */
export { keepEarlierAttempt, mergeResult, readResults, sampleResult, writeResult } from './recording/sample-results';
export type { AttemptBrief, SampleResult } from './recording/sample-results';
export { keptPacing, writeAttemptPacing } from './recording/attempt-pacing';
export { Checkpoint } from './recording/checkpoint';
export { postprocessSession } from './recording/postprocess';
export type { PostprocessSummary, PostprocessTask } from './recording/postprocess';
/** The module a ProcessPool starts to post-process recorded sessions. */
export const POSTPROCESS_WORKER = entryModule(__dirname, 'recording/postprocess-worker', 'postprocess-worker');

/* Runs read back: pooled across processes, traces graded against the native contract */
export { buildMergedSummary, mergeChildren, mergeDuplex, readRunForMerge, shiftRun, steadyFrom } from './merge-runs';
export type { MergedSummary, RunForMerge } from './merge-runs';
export { checkTraceFile, checkTraces, runProtocol, traceFiles } from './check-traces';
export { checkOpenAITrace, checkVllmOmniTrace } from './dialect-rules';
export type { DialectRulesResult } from './dialect-rules';
export { RunDirError, runDirsOf, runDirsOfAll } from './run-dirs';
export type { CheckReport, SessionCheck } from './check-traces';

/* From a user's dialect settings to a session's connection */
export {
  authHeaders,
  checkPacket,
  CHILD_KEY_ENV,
  connectionSettings,
  DEFAULT_PACKET_MS,
  DEFAULT_UNIT_TIMEOUT_MS,
  dialectConfig,
  dialectRecord,
  redactArgv,
  sessionUrl,
  withoutSecrets,
} from './dialect-options';
export type { DialectOptions } from './dialect-options';
export { packetSizeOr, resolvePacketSize } from './packet-size';
export type { PacketSize } from './packet-size';
export { openAll, openFirstThenAll, removeTrace, runPackets, sessionsFile } from './open-sessions';
export { parseShard, shardSessions, startAtGate } from './shard';
export type { Shard } from './shard';
export { postprocessRecorded, postprocessTask, recordingDataset, recordingSummary, samplePackets } from './recording/recording';
export type { Invocation } from './recording/recording';
export { estimateClockOffset, timeUrlOf } from './clock-offset';
export type { ClockOffset } from './clock-offset';
export { lineUpClocks, readRunClocks } from './clock-lineup';
export type { ClockLineup, RunClocks } from './clock-lineup';
