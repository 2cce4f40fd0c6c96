import { pcm16BytesPerMs, type PacketSource } from '@duplex-bench/audio';

/** The input a session has sent so far. */
export interface InputSent {
  bytes: number;
}

/**
 * The stage that adds each packet's bytes to `sent` and tells `onInput` how much input had gone
 * when it did (ms at the input rate), with the packet's send start and send return: unit lag
 * runs from there.
 */
export function countInputSent(
  packets: Pick<PacketSource, 'packetBytes' | 'sample_rate'>,
  sent: InputSent,
  onInput: (start_s: number, sent_ms: number, completed_s: number) => void,
): (packet: { seq: number; start_s: number; completed_s: number }) => void {
  const bytesPerMs = pcm16BytesPerMs(packets.sample_rate);
  return (packet) => {
    sent.bytes += packets.packetBytes(packet.seq);
    onInput(packet.start_s, sent.bytes / bytesPerMs, packet.completed_s);
  };
}
