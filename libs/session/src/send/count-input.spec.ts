import { countInputSent } from './count-input';

describe('countInputSent', () => {
  it('adds each packet\'s bytes and tells the input sent so far in ms, with the send start and return', () => {
    const sent = { bytes: 0 };
    const told: Array<[number, number, number]> = [];
    // 2,560 bytes a packet at 16 kHz (80 ms), a short last one of 1,280.
    const stage = countInputSent({ sample_rate: 16000, packetBytes: (seq) => (seq < 2 ? 2560 : 1280) }, sent, (s, ms, c) => told.push([s, ms, c]));
    for (const seq of [0, 1, 2]) stage({ seq, start_s: seq, completed_s: seq + 0.001 });
    expect(sent.bytes).toBe(6400);
    expect(told).toEqual([[0, 80, 0.001], [1, 160, 1.001], [2, 200, 2.001]]);
  });
});
