export { decodeFrame, base64ByteLength, DecodedFrame, audioDeltaInfo } from './frame';
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

/* Error types */
export { ProtocolError } from './errors';
export type { ProtocolErrorCode, ProtocolErrorInfo } from './errors';
