export { WsConnection } from './connection';
export type { Connect, Connection, ConnectOptions, ReceivedEvent } from './connection';
export { ReadBurst, processReads, READ_BURST_S } from './read-burst';
export { waitForEvent } from './wait-for';
export { admissionBackoffMs, admissionRefusal, admitted, NATIVE_ADMISSION } from './admission';
export type { Admission, AdmissionPolicy, AdmissionRefusal } from './admission';
export { sendAppends, sendOn } from './send-on';
export { lockstepAppends } from './lockstep-appends';
export type { LockstepPlan } from './lockstep-appends';
export type { AppendAudio, OutgoingFrame, SendReceipt } from './send-on';
export { nativeHandshake, nativeEndSession, NativeFlow } from './native-flow';
export { OpenAIFlow, readSessionCreated } from './openai-flow';
export { VllmOmniFlow } from './vllm-omni-flow';
export { LegacyFlow } from './legacy-flow';
export { sendCommits } from './send-commits';
export { createSessionFlow, sendsCameraFrames, trailingSilenceMs, withSessionCamera } from './create-flow';
export type { CameraFrames, DialectConfig, EndReport, FlowOptions, NativeDrainReport, OpenAIFlowConfig, SentHook, ServerEventSeqFigures, SessionFlow, SessionGrant, VllmOmniFlowConfig } from './flow';
export { drainTimeoutMs, FLOW_TIMEOUTS, VLLM_TIMEOUTS, vllmDrainTimeoutMs } from './flow';
export type { LegacyFlowConfig } from './flow';

/* Error types */
export { TransportError } from './errors';
export type { IncompleteReason, TransportErrorInfo } from './errors';
