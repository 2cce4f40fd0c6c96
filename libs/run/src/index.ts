/* The run lifecycle: measures, opening sessions, the start gate, clocks, shards, grants, the verdict */
export { ProcessMeasures } from './process-measures';
export { ProcessTelemetry } from './process-telemetry';
export { ProcessSampler } from './process-sampler';
export { prepareStall, type StallKind } from './inject-stall';
export { GrantLog } from './grant-record';
export type { GrantRecord } from './grant-record';
export { arrivalPackets, openAll, openFirstThenAll, removeTrace, runPackets, type AudioInputRecord } from './open-sessions';
export { EndedSessions, sessionLines, sessionRow } from './ended-sessions';
export { parseShard, shardSessions, startAtGate } from './shard';
export type { Shard } from './shard';
export { estimateClockOffset, timeUrlOf } from './clock-offset';
export type { ClockOffset } from './clock-offset';
export { lineUpClocks, readRunClocks } from './clock-lineup';
export type { ClockLineup, RunClocks } from './clock-lineup';
export { verdictLine, verdictOf, withVerdict } from './verdict';
export { abortLine, eachHook, SloWatch } from './slo-watch';
export type { SloAbort, SloWatchOptions } from './slo-watch';
export type { RunVerdict, Verdict, VerdictInput } from './verdict';

/* Sessions that arrive and leave: the schedule fixed up front, and the open-loop run of it */
export { arrivalSchedule, MAX_ARRIVALS } from './arrivals/arrival-schedule';
export type { ArrivalPlan, ArrivalProcess, PlannedArrival } from './arrivals/arrival-schedule';
export { CONVERSATION_LENGTH, describeDuration, drawDurationS, meanDurationS, MIN_SESSION_S, parseSessionDuration } from './arrivals/session-duration';
export type { SessionDuration } from './arrivals/session-duration';
export { ArrivalRun } from './arrivals/arrival-run';
export type { ArrivalCounts, ArrivalRunOptions, ArrivingSession } from './arrivals/arrival-run';

/* A conversation's sessions: the script read once, the voice activity thread, the behaviour figures pooled */
export { ConversationInput, modelSpeechOrigin } from './conversation-input';
export type { ConversationSettings, ConversationRecord } from './conversation-input';
export { behaviourFigures, hearConversationOr } from './conversation-behaviour';
export type { BehaviourFigures, ConversationHearing, ConversationOutcome } from './conversation-behaviour';

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

/* Recording: samples kept one by one, resumable, post-processed in a pool */
export { keepEarlierAttempt, mergeResult, readResults, sampleResult, writeResult } from './recording/sample-results';
export type { AttemptBrief, SampleResult } from './recording/sample-results';
export { keptPacing, writeAttemptPacing } from './recording/attempt-pacing';
export { Checkpoint } from './recording/checkpoint';
export { postprocessSession } from './recording/postprocess';
export type { PostprocessSummary, PostprocessTask } from './recording/postprocess';
export { conversationDataset, POSTPROCESS_WORKER, postprocessRecorded, postprocessTask, recordingDataset, recordingSummary, samplePackets } from './recording/recording';
export type { Invocation } from './recording/recording';

/* The lifecycle of a run and of a recording: inputs, writer, sessions, telemetry, sampler, start gate, summary, files */
export { runSessions } from './lifecycle/run-sessions';
export type { RenderRun, RunHooks } from './lifecycle/run-sessions';
export { recordSessions } from './lifecycle/record-sessions';
export type { RecordCounts, RecordHooks, RenderRecording } from './lifecycle/record-sessions';
export type { ArrivalOptions, ConversationOptions, RecordArrivals, RecordOptions, RunOptions } from './lifecycle/run-settings';
export { builtinMockArgs, withBuiltinMock } from './lifecycle/builtin-mock';
export type { BuiltinMockOptions } from './lifecycle/builtin-mock';
export { launchRequests, runRequests } from './lifecycle/run-requests';
export type { HttpRunOptions, RenderHttp } from './lifecycle/run-requests';
export { launchSessions } from './lifecycle/launch-sessions';
export type { RenderMerged } from './lifecycle/launch-sessions';
export { mergeRuns } from './lifecycle/merge-runs';
export type { MergeOptions, RenderMerge } from './lifecycle/merge-runs';
export { defaultSampleRate, dialectWarnings, parseDialectOptions } from './lifecycle/dialect-settings';
export type { DialectFlagValues } from './lifecycle/dialect-settings';
export { arrivalOptions } from './lifecycle/arrival-settings';
export type { ArrivalFlagValues } from './lifecycle/arrival-settings';
export { httpRun } from './lifecycle/run-http';
export type { HttpFlagValues } from './lifecycle/run-http';
export { exitOf } from './lifecycle/exit-status';
export { mibPerMin, Progress, rssLive } from './lifecycle/progress';
export type { ProgressFigures } from './lifecycle/progress';
export { renderArrivals, renderBehaviour, renderDuplex, renderReceiveDelay, renderRunSummary, renderServerMetrics, renderStalls, renderUnits, rssGrowthText } from './summary-lines';

/* Error types */
export { RunInputError } from './input-error';
export type { RunInputCode } from './input-error';
