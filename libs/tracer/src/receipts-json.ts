import type { ReceiptBlock } from './messages';

/** The receipts of `block` as the comma-separated entries of the `appends` array. */
export function receiptEntries(block: ReceiptBlock): string {
  const parts: string[] = new Array(block.size);
  const t = block.times;
  for (let i = 0; i < block.size; i++) {
    parts[i] =
      `{"event_id":${JSON.stringify(block.event_ids[i])},"seq":${block.seq[i]},"scheduled_s":${t[3 * i]},` +
      `"start_s":${t[3 * i + 1]},"completed_s":${t[3 * i + 2]}}`;
  }
  return parts.join(',');
}

/** `{"appends":[…]}` as compact JSON, the input-send-receipts.json format. */
export function receiptsJson(block: ReceiptBlock): string {
  return `{"appends":[${receiptEntries(block)}]}`;
}

/**
 * A session's receipts kept before they go to the writer thread as a part: 1,024 (82 s at 80 ms).
 * The thread writes the file's head and the parts as they come, and its tail at the session's end,
 * so a session of hours holds at most a part. A session's first part is shorter (pacer's `staggeredFirst`).
 */
export const RECEIPTS_PART = 1024;

/** Receipts of one session in columns, grown by doubling: no object per packet is kept. */
export class ReceiptColumns {
  size = 0;
  private ids: string[] = [];
  private seq = new Int32Array(128);
  private times = new Float64Array(128 * 3);

  push(event_id: string, seq: number, scheduled_s: number, start_s: number, completed_s: number): void {
    if (this.size === this.seq.length) {
      const grownSeq = new Int32Array(this.seq.length * 2);
      grownSeq.set(this.seq);
      const grownTimes = new Float64Array(this.times.length * 2);
      grownTimes.set(this.times);
      this.seq = grownSeq;
      this.times = grownTimes;
    }
    const i = this.size++;
    this.ids.push(event_id);
    this.seq[i] = seq;
    this.times[3 * i] = scheduled_s;
    this.times[3 * i + 1] = start_s;
    this.times[3 * i + 2] = completed_s;
  }

  /** The columns, trimmed; ready to be transferred to the worker. The columns start again, empty (their arrays kept). */
  take(): ReceiptBlock {
    const block = { size: this.size, event_ids: this.ids, seq: this.seq.slice(0, this.size), times: this.times.slice(0, 3 * this.size) };
    this.size = 0;
    this.ids = [];
    return block;
  }
}
