/** What a session counts of its sends: packets sent, late ones, and whether any was. */
export interface PacketCounts {
  packets_sent: number;
  late: number;
  violation: boolean;
}

/** The stage that counts each packet into `counts` (a session's result). */
export function countPackets(counts: PacketCounts): (packet: { late?: boolean }) => void {
  return (packet) => {
    counts.packets_sent++;
    if (packet.late) {
      counts.late++;
      counts.violation = true;
    }
  };
}
