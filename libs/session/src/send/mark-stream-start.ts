/** The stage that calls `onStart` with packet 0's send start: the input stream's origin. */
export function markStreamStart(onStart: (start_s: number) => void): (packet: { seq: number; start_s: number }) => void {
  return (packet) => {
    if (packet.seq === 0) onStart(packet.start_s);
  };
}
