/* One session: its states, its send and receive paths of named operators, its context and its result */
export { RealtimeSession } from './realtime-session';
export { admissionBackoffMs, admissionRefusal, NATIVE_ADMISSION } from './admission';
export type { AdmissionPolicy } from './admission';
export type { SessionContext } from './context';
export { reasonOf } from './outcome';
export type { SessionResult } from './result';
export { SendBarrier } from './send-barrier';
export type { SessionState } from './session-state';
