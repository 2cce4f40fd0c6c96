/* One session: its states, its send and receive paths of named operators, its context and its result */
export { RealtimeSession } from './realtime-session';
// Admission is transport's (admitted); its policy is named here for a session's users.
export { admissionBackoffMs, admissionRefusal, NATIVE_ADMISSION } from '@duplex-bench/transport';
export type { AdmissionPolicy } from '@duplex-bench/transport';
export type { SessionContext } from './context';
export { reasonOf } from './outcome';
export type { SessionResult } from './result';
export { SendBarrier } from './send-barrier';
export type { SessionState } from './session-state';
