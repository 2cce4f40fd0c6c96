import { tap, type MonoTypeOperatorFunction } from 'rxjs';

/** What a session counts of its sends: packets sent, late ones, and whether any was. */
export interface PacketCounts {
  packets_sent: number;
  late: number;
  violation: boolean;
}

/** Counts each packet as it passes into `counts` (a session's result). */
export function countPackets<T extends { late?: boolean }>(counts: PacketCounts): MonoTypeOperatorFunction<T> {
  return tap((packet) => {
    counts.packets_sent++;
    if (packet.late) {
      counts.late++;
      counts.violation = true;
    }
  });
}
