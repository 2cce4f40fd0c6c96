export { WsConnection } from './connection';
export type { ConnectOptions, ReceivedEvent } from './connection';
export { waitForEvent } from './wait-for';
export { sendOn } from './send-on';
export type { OutgoingFrame, SendReceipt } from './send-on';
export { nativeHandshake, nativeEndSession, failOnFatalServerError } from './native-session';
export type { NativeFlowOptions, NativeDrainReport, SentHook } from './native-session';

/* Error types */
export { TransportError } from './errors';
export type { IncompleteReason, TransportErrorInfo } from './errors';
