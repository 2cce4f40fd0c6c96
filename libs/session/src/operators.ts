import { map, type OperatorFunction } from 'rxjs';
import type { PacketSource } from '@duplex-bench/audio';
import type { Tick } from '@duplex-bench/pacer';
import type { OutgoingFrame, SessionFlow } from '@duplex-bench/transport';

/**
 * Each tick as the frame that carries its packet in the session's dialect: event id
 * `<prefix><seq>`, the packet's audio, and the tick's due and fire times for the pacing check.
 */
export function toAppendFrames(flow: Pick<SessionFlow, 'append'>, packets: PacketSource, prefix: string): OperatorFunction<Tick, OutgoingFrame> {
  return map((tick) => {
    const event_id = prefix + tick.seq;
    return {
      seq: tick.seq,
      event_id,
      frame: flow.append(event_id, tick.seq, tick.seq * packets.packet_ms, packets.packetBase64(tick.seq)),
      scheduled_s: tick.due_s,
      start_s: tick.fired_s,
    };
  });
}
