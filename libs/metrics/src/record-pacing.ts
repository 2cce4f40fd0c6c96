import { finalize, map, pipe, type OperatorFunction } from 'rxjs';
import type { PacingRecorder, PacketTimes } from './pacing-recorder';

/** A sent packet's times, with whether it was late against its session's packet 0. */
export type PacedPacket<T extends PacketTimes> = T & { late: boolean };

/**
 * Records each sent packet of one session: into the process's pacing histograms and into the
 * session's column of raw samples. Deviations run from the send start of the session's packet 0.
 * The column's `end` is called once the session sent its last packet (or stopped).
 */
export function recordPacing<T extends PacketTimes>(recorder: PacingRecorder, column: { push(p: PacketTimes): void; end?(): void }): OperatorFunction<T, PacedPacket<T>> {
  let origin_s: number | null = null;
  const paced = map((p: T) => {
    origin_s ??= p.start_s; // the first packet is packet 0: ticks start at 0
    column.push(p);
    // The receipt is this pipeline's own (sendOn made it for this packet): marked in place, as a
    // copy per packet was one more object of eight fields for every append (6,400 a second at 512
    // sessions). A receipt made with its `late` (sendOn's) takes the mark with no new property.
    const paced = p as PacedPacket<T>;
    paced.late = recorder.record(p, origin_s);
    return paced;
  });
  return pipe(paced, finalize(() => column.end?.()));
}
