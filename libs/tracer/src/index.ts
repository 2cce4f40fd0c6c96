export { TraceWriter } from './trace-writer';
export type { AdmissionRefusal, ReceiptTimes, SessionTraceSink, TraceWriterOptions, TraceWriterStats } from './trace-writer';
export type { TraceLayout, TraceMode } from './messages';
export { withoutAudio } from './without-audio';
export { traceReceipts, traceReceived } from './operators';
export { ReceiptColumns, receiptsJson } from './receipts-json';

/* Error types */
export { TraceWriteError } from './trace-writer';
