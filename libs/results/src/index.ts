/* The run directory: its files named, the figures a run writes, read back and pooled */
export { notValid, parseJsonLines, readJsonFile, readRunJson, readSessionRows, RunFileError, writeRunFile, RUN_FILES, runFile, sampleRecordFile, SAMPLES_DIR, SESSION_FILES, sessionDir, sessionFile, SESSIONS_DIR, TRACE_LAYOUT, writeRunJson } from './run-files';
export type { RunFile, SessionFile } from './run-files';
export { appendRunFile, unwrittenLine, writeEvery } from './write-every';
export type { RunFileWrite, WrittenFiles } from './write-every';
export { readRunRecord, writeRunRecord } from './run-record';
export { DuplexMetricsRows, duplexMetricsRow, writeDuplexMetrics } from './duplex-metrics-file';
export type { ClockOffsetRecord, ClockPair, Invocation, RunRecord } from './run-record';
export { buildSummary, duplexMetrics, LOCKSTEP_ORIGIN, MEASUREMENT_ORIGIN, UNIT_ORIGIN, unitSummary, videoFigures, vllmOmniFigures } from './summary';
export { legacyFigures } from './summary';
export type { LegacyFigures } from './summary';
export type { DuplexAggregate, DuplexMetricsFile, DuplexSession, DuplexSessionRow, LockstepFigures, PacingMode, ResponseFigures, RunSummary, SummaryInputs, SummaryVerdict, UnitFigures, VideoFigures, VllmOmniFigures } from './summary';
export { buildMergedSummary, mergeChildren, mergeDuplex, mergedLegacy, mergeLegacy, pooledDuplexSessions, readRunForMerge, shiftRun, steadyFrom } from './merge-runs';
export type { LegacyPart, MergedSummary, RunForMerge } from './merge-runs';
export type { SessionResult } from './session-result';
export { ARRIVALS_ORIGIN, arrivalsSummary, blockingProbability } from './arrivals-summary';
export type { ArrivalCountFigures, ArrivalRate, ArrivalsInput, ArrivalsSummary } from './arrivals-summary';
export { runDirsOf, runDirsOfAll } from './run-dirs';
export { CONVERSATION_ONCE_ORIGIN, conversationOnceFigures, withConversationOnce } from './conversation-once';
export type { ConversationOnceFigures } from './conversation-once';
export { duplexClientFigures } from './server-beside';
export { jsonLines, readSamplerFile, readServerMetrics, readSessionSpeech, readTurns } from './conversation-files';
export type { ServerMetricsRow } from './conversation-files';

/* Error types */
export { RunDirError } from './run-dirs';
export { ResultsInputError } from './input-error';
export type { ResultsInputCode } from './input-error';
export { checkSlo, DEFAULT_SLO, judgedLive, LIVE_SLO_FIGURES, parseSlo, SLO_FIGURES, sloFigure, SloError, termLabel } from './slo';
export type { SloCheck, SloTerm } from './slo';
