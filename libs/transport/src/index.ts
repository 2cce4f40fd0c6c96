export { WsConnection } from './connection';
export type { ConnectOptions, ReceivedEvent } from './connection';
export { waitForEvent } from './wait-for';
export { sendOn } from './send-on';
export type { OutgoingFrame, SendReceipt } from './send-on';
export { nativeHandshake, nativeEndSession, NativeFlow } from './native-session';
export { OpenAIFlow, readSessionCreated } from './openai-session';
export type { OpenAIFlowConfig } from './openai-session';
export { VllmOmniFlow } from './vllm-omni-session';
export type { VllmOmniFlowConfig } from './vllm-omni-session';
export { createSessionFlow } from './create-flow';
export type { DialectConfig, EndReport, FlowOptions, ServerEventSeqFigures, SessionFlow, SessionGrant } from './session-flow';
export type { NativeFlowOptions, NativeDrainReport, SentHook } from './native-session';

/* Error types */
export { TransportError } from './errors';
export type { IncompleteReason, TransportErrorInfo } from './errors';
