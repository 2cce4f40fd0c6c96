/* One session: its pipeline (sends, receive readers, response and turn tracking), its context and its result */
export { admissionBackoffMs, admissionRefusal, NATIVE_ADMISSION, RealtimeSession, SendBarrier, reasonOf } from './realtime-session';
export type { AdmissionPolicy, SessionContext, SessionResult } from './realtime-session';
