import { countPackets } from './count-packets';

describe('countPackets', () => {
  it('counts packets sent and late ones; one late packet is a violation', () => {
    const counts = { packets_sent: 0, late: 0, violation: false };
    const stage = countPackets(counts);
    stage({});
    expect(counts).toEqual({ packets_sent: 1, late: 0, violation: false });
    stage({ late: true });
    stage({ late: false });
    expect(counts).toEqual({ packets_sent: 3, late: 1, violation: true });
  });
});
