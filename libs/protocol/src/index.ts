export { decodeFrame, base64ByteLength, DecodedFrame, audioDeltaInfo } from './frame';
export type { AudioDeltaInfo } from './frame';
export {
  NativeEvent,
  isKnownNativeType,
  assertSafeId,
  nativeSessionUpdate,
  nativeAppend,
  nativeInputEnd,
  nativeSessionClose,
  serverError,
} from './native';
export type { NativeAudioFormat, NativeSessionRequest } from './native';
export {
  defaultNativeGrant,
  nativeSessionCreated,
  nativeSessionUpdated,
  nativeAccepted,
  nativeResponseCreated,
  NativeAudioDeltaTemplate,
  nativeTextDelta,
  nativeUnitDone,
  nativeInputEnded,
  nativeAudioDone,
  nativeResponseDone,
  nativeDrained,
  nativeSessionClosed,
  nativeError,
} from './native-server';
export type { NativeGrant, NativeDrainFigures } from './native-server';
export {
  OpenAIEvent,
  OPENAI_BETA_NAMES,
  gaEventName,
  isKnownOpenAIType,
  openaiSessionUpdate,
  openaiAppend,
  openaiCommit,
  openaiResponseCreate,
  openaiSessionRates,
  openaiSessionTurnDetection,
} from './openai';
export type { OpenAISessionRequest, TurnDetection } from './openai';
export { OpenAIServerEvents } from './openai-server';
export type { OpenAINames } from './openai-server';
export { chunkPeriodMs, serverEventSeq, responseRequestMetrics, ServerEventSeqTracker } from './vllm-omni';
export type { ServerRequestMetrics } from './vllm-omni';

/* Error types */
export { ProtocolError } from './errors';
export type { ProtocolErrorCode, ProtocolErrorInfo } from './errors';
