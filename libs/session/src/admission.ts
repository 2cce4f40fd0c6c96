// Admission (a full server's refusal, retried) is transport's to own: `admitted` there. The
// session's policy type and defaults are named here for its context and its users.
export { admissionBackoffMs, admissionRefusal, NATIVE_ADMISSION } from '@duplex-bench/transport';
export type { AdmissionPolicy } from '@duplex-bench/transport';
