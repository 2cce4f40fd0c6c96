export { ReceiptsOnlyWriter, RECEIPTS_FILE } from './session-trace';
export type { ReceiptTimes, SessionTraceSink, TraceWriter } from './session-trace';
export { traceReceipts, traceReceived } from './operators';

/* Error types */
export { TraceWriteError } from './session-trace';
