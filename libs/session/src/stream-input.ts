import { pcm16BytesPerMs } from '@duplex-bench/audio';
import { ResponseTracker } from '@duplex-bench/metrics';
import { sendCommits, type Connection, type SendReceipt } from '@duplex-bench/transport';
import type { SessionResult } from './result';
import { afterSend } from './send/after-send';
import { countInputSent } from './send/count-input';
import { countPackets } from './send/count-packets';
import { markStreamStart } from './send/mark-stream-start';
import { sendPath } from './send-path';
import type { SessionBook } from './session-book';
import { streamPackets } from './stream-packets';

/**
 * The streaming state's work: every packet from `start_s` on the send path, and after each send,
 * in order, the input stream's start (packet 0: the response figures start) → the input sent (unit
 * lag runs from it) → the turn commits that follow the append → the session's counts. Resolves when
 * every packet went (or a stop came), rejects when the socket broke.
 */
export function streamInput(b: SessionBook, conn: Connection, result: SessionResult, start_s: number): Promise<void> {
  const { ctx, packets, flow, sink } = b;
  return streamPackets({
    ended$: conn.ended$,
    stops: [ctx.stop$, b.errors.stopped$],
    sends: sendPath({ id: b.id, ctx, conn, flow, packets, sink, units: b.units, unitsDone$: b.unitsDone$, onInputOver: () => inputOver(b) }, start_s),
    after: afterSend<SendReceipt & { late?: boolean }>(
      markStreamStart((origin_s) => {
        b.origin_s = origin_s;
        b.responses = new ResponseTracker({ output_sample_rate: b.grant.output_sample_rate, onDone: ctx.onResponse, onFirst: ctx.onFirstOutput }, origin_s);
        ctx.onStreamStart();
      }),
      countInputSent(packets, b.input, (s, sent_ms, completed_s) => b.units?.inputSent(s, sent_ms, completed_s)),
      sendCommits(flow, (frame) => {
        const sent_s = ctx.clock.now_s();
        conn.send(frame);
        sink.sent(frame, sent_s);
      }),
      countPackets(result),
    ),
    started: () => b.origin_s !== null,
    onStreamEnd: () => ctx.onStreamEnd(),
  });
}

/** The source ended its input early (a conversation played once): the stream is complete, and its units are those of the input sent. */
function inputOver(b: SessionBook): void {
  b.inputOver = true;
  b.units?.inputEnded(b.input.bytes / pcm16BytesPerMs(b.packets.sample_rate));
}
