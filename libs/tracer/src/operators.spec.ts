import { from, lastValueFrom, Subject, toArray } from 'rxjs';
import { traceReceipts, traceReceived } from './operators';
import type { ReceiptTimes, SessionTraceSink } from './trace-writer';

/** A sink that notes every call, in order. */
function recordingSink() {
  const calls: unknown[][] = [];
  const sink: SessionTraceSink = {
    tracesFrames: true,
    sent: (frame, time_s) => calls.push(['sent', frame, time_s]),
    received: (frame, time_s) => calls.push(['received', frame, time_s]),
    receipt: (r) => calls.push(['receipt', r]),
    error: (message, time_s) => calls.push(['error', message, time_s]),
    admission: (attempt, refusal, time_s) => calls.push(['admission', attempt, refusal, time_s]),
    close: () => Promise.resolve(),
  };
  return { sink, calls };
}

type SentReceipt = ReceiptTimes & { frame: string | Uint8Array };

const receipt = (seq: number, frame: string | Uint8Array): SentReceipt => ({
  event_id: `s1_a${seq}`,
  seq,
  scheduled_s: 100 + seq * 0.08,
  start_s: 100 + seq * 0.08 + 0.0001,
  completed_s: 100 + seq * 0.08 + 0.0003,
  frame,
});

describe('traceReceipts', () => {
  it('hands each frame sent, at its start time, then its receipt, to the sink as it passes, and passes it on unchanged', async () => {
    const { sink, calls } = recordingSink();
    const bytes = Uint8Array.of(1, 2, 3);
    const receipts = [receipt(0, '{"type":"input_audio_buffer.append"}'), receipt(1, bytes)];
    const out = await lastValueFrom(from(receipts).pipe(traceReceipts(sink), toArray()));
    expect(out).toEqual(receipts);
    expect(out[1]).toBe(receipts[1]);
    expect(calls).toEqual([
      ['sent', '{"type":"input_audio_buffer.append"}', receipts[0].start_s],
      ['receipt', receipts[0]],
      ['sent', bytes, receipts[1].start_s],
      ['receipt', receipts[1]],
    ]);
  });

  it('hands each one over as it passes, not at the end', () => {
    const { sink, calls } = recordingSink();
    const source = new Subject<SentReceipt>();
    const seen: number[] = [];
    source.pipe(traceReceipts(sink)).subscribe((r) => seen.push(r.seq));
    source.next(receipt(0, 'a'));
    expect(calls.map((c) => c[0])).toEqual(['sent', 'receipt']);
    expect(seen).toEqual([0]);
    source.next(receipt(1, 'b'));
    expect(calls).toHaveLength(4);
    source.complete();
  });
});

describe('traceReceived', () => {
  it('hands each frame received to the sink at its arrival time: the bytes that arrived when kept, its text otherwise', async () => {
    const { sink, calls } = recordingSink();
    const raw = Buffer.from('{"type":"response.created"}');
    const frames = [
      { frame: { text: '{"type":"response.created"}' }, raw, received_s: 5.5 },
      { frame: { text: '{"type":"response.done"}' }, received_s: 6.25 },
    ];
    const out = await lastValueFrom(from(frames).pipe(traceReceived(sink), toArray()));
    expect(out).toEqual(frames);
    expect(calls).toEqual([
      ['received', raw, 5.5],
      ['received', '{"type":"response.done"}', 6.25],
    ]);
  });

  it('passes an error on without handing anything more to the sink', () => {
    const { sink, calls } = recordingSink();
    const source = new Subject<{ frame: { text: string }; received_s: number }>();
    const errors: unknown[] = [];
    source.pipe(traceReceived(sink)).subscribe({ error: (e) => errors.push(e) });
    source.next({ frame: { text: 'x' }, received_s: 1 });
    source.error(new Error('socket closed'));
    expect(errors).toEqual([new Error('socket closed')]);
    expect(calls).toEqual([['received', 'x', 1]]);
  });
});
