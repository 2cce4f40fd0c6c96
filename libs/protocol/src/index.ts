export { decodeFrame, decodeFrameBytes, base64ByteLength, DecodedFrame, audioDeltaInfo, audioDeltaBase64, spliceFrame, frameSent, clientFrame, textDeltaInfo } from './frame';
export type { AudioDeltaInfo, TextDeltaInfo } from './frame';
export {
  NativeEvent,
  isKnownNativeType,
  assertSafeId,
  nativeSessionUpdate,
  nativeAppend,
  nativeImageAppend,
  nativeInputEnd,
  nativeSessionClose,
  readNativeGrant,
  NativeReceiptSeq,
  serverError,
} from './native';
export type { NativeGrantFigures } from './native';
export { NATIVE_PROFILES, NATIVE_INPUT_SAMPLE_RATE, NATIVE_INPUT_BYTES_PER_MS, nativeProfileOf } from './native-profiles';
export type { NativeProfile, NativeProfileName } from './native-profiles';
export {
  nativeGrant,
  nativeUnitId,
  nativeSessionCreated,
  nativeSessionUpdated,
  nativeAccepted,
  nativeResponseCreated,
  NativeAudioDeltaTemplate,
  nativeTranscriptDelta,
  nativeTextDelta,
  nativeUnitDone,
  nativeInputEnded,
  nativeAudioDone,
  nativeResponseDone,
  nativeDrained,
  nativeSessionClosed,
  nativeError,
} from './native-server';
export type { NativeGrant, NativeLimits, NativeAudioFormat, NativeResponseEnd, NativeDrainFigures } from './native-server';
export {
  OpenAIEvent,
  OPENAI_BETA_NAMES,
  gaEventName,
  isKnownOpenAIType,
  openaiSessionUpdate,
  openaiAppend,
  openaiCommit,
  openaiResponseCreate,
  openaiResponseCancel,
  openaiItemTruncate,
  openaiInterruptsResponse,
  openaiSessionRates,
  openaiSessionTurnDetection,
  OPENAI_PCM_RATE,
} from './openai';
export type { OpenAISessionRequest, TurnDetection } from './openai';
export { OpenAIServerEvents } from './openai-server';
export type { OpenAINames } from './openai-server';
export {
  chunkPeriodMs,
  serverEventSeq,
  responseRequestMetrics,
  ServerEventSeqTracker,
  VllmEvent,
  isKnownVllmType,
  vllmRealtimeUrl,
  vllmSessionUpdate,
  vllmAppend,
  vllmCommit,
  vllmPlaybackAck,
  vllmEventAck,
  vllmSessionClose,
  vllmSessionRates,
  vllmResponseId,
  vllmAppendWithFrames,
  vllmImageItem,
  vllmItemDelete,
  vllmFrameTransport,
  VLLM_IMAGE_WINDOW,
  VLLM_APPEND_FRAMES,
  VLLM_SERVER_VAD_TAIL_MS,
  VLLM_TURN_SETTLE_MS,
  vllmHeartbeat,
  mergeFields,
  wavDataUrl,
  VLLM_ACK_RACE_CODE,
  VLLM_ACK_AFTER_END_CODE,
  vllmNotFoundResponseId,
  VLLM_CLIENT_PROTOCOL_CODES,
  VLLM_CAPACITY_CODE,
} from './vllm-omni';
export type { ServerRequestMetrics, VllmFrameTransport, VllmSessionRequest } from './vllm-omni';

export { LegacyEvent, LEGACY_PROFILES, LEGACY_POST_CLOSE_MS, isKnownLegacyType, legacyConfigure, legacyProbe, legacyAppend, legacyTurnDetectionOf, legacyResponseId, legacyTerminal } from './legacy';
export type { LegacyProfile, LegacyProfileName, LegacyTurnDetection } from './legacy';
export { LegacyServerEvents } from './legacy-server';
export type { LegacyResponseEnd } from './legacy-server';

/* Error types */
export { ProtocolError } from './errors';
export type { ProtocolErrorCode, ProtocolErrorInfo } from './errors';
export { TIME_PATH } from './reference-clock';

/* Response events: what a received frame says of the model's responses, in every dialect's names */
export { addResponseEvents, modelAudioOf } from './response-events';
export type { ResponseEvent, ResponseStatus } from './response-events';
export { monotonicMs, sentStampOf, SENT_STAMP_KEY, stampSent } from './sent-stamp';
