import { takeWhile, type BehaviorSubject, type Observable } from 'rxjs';
import { pcm16BytesPerMs, type PacketSource } from '@duplex-bench/audio';
import { recordPacing, type SessionUnits } from '@duplex-bench/metrics';
import { ticks, timersOn } from '@duplex-bench/pacer';
import { lockstepAppends, sendAppends, type Connection, type SendReceipt, type SessionFlow } from '@duplex-bench/transport';
import { traceReceipts, type SessionTraceSink } from '@duplex-bench/tracer';
import type { SessionContext } from './context';

export interface SendPath {
  id: string;
  ctx: Pick<SessionContext, 'scheduler' | 'pacing' | 'samples' | 'clock' | 'timers' | 'lockstep'>;
  conn: Connection;
  flow: SessionFlow;
  packets: PacketSource;
  sink: SessionTraceSink;
  /** Lockstep: the session's units and the count of their `unit.done`. */
  units: SessionUnits | null;
  unitsDone$: BehaviorSubject<number> | null;
  /** Told when a source that ends as it plays (a conversation played once) says its input is over. */
  onInputOver(): void;
}

/**
 * The sends, packet to traced receipt: realtime, absolute-deadline ticks → each as the dialect's
 * append, sent (`sendAppends`) → receipts traced → pacing recorded; lockstep, each unit's packets
 * sent once the previous unit is done (`lockstepAppends`) → receipts traced, with no pacing to
 * record (no schedule). Chosen once per session.
 */
export function sendPath(p: SendPath, start_s: number): Observable<SendReceipt & { late?: boolean }> {
  const { scheduler, pacing, clock, lockstep } = p.ctx;
  const { packets, flow, conn } = p;
  const prefix = `${p.id}_a`;
  if (lockstep && p.units && p.unitsDone$) {
    const input_ms = packets.total_bytes / pcm16BytesPerMs(packets.sample_rate);
    const plan = {
      start_s,
      packet_count: packets.packet_count,
      inputEndMs: (seq: number) => Math.min((seq + 1) * packets.packet_ms, input_ms),
      unit_ms: p.units.unit_ms,
      unit_timeout_ms: lockstep.unit_timeout_ms,
    };
    return lockstepAppends(conn, flow, packets, prefix, clock, p.ctx.timers ?? timersOn(clock), p.unitsDone$, plan).pipe(traceReceipts(p.sink));
  }
  const due = ticks(scheduler, { start_s, period_ms: packets.packet_ms, count: packets.packet_count });
  const inputOverAt = packets.inputOverAt?.bind(packets);
  const input = inputOverAt
    ? due.pipe(
        takeWhile((tick) => {
          const over = inputOverAt(tick.seq);
          if (over) p.onInputOver();
          return !over;
        }),
      )
    : due;
  return input.pipe(sendAppends(conn, flow, packets, prefix, clock), traceReceipts(p.sink), recordPacing(pacing, p.ctx.samples.open(p.id)));
}
