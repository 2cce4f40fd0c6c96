import { pcmPackets, silencePackets } from './packets';

describe('packets', () => {
  it('cuts 30 s of 16 kHz silence into 375 packets of 2,560 bytes', () => {
    const source = silencePackets(30, 80);
    expect(source.packet_count).toBe(375);
    expect(source.packetBytes(374)).toBe(2560);
    expect(Buffer.from(source.packetBase64(0).toString(), 'base64')).toHaveLength(2560);
  });

  it('sends the last packet short, not padded', () => {
    const source = silencePackets(0.1, 80);
    expect(source.packet_count).toBe(2);
    expect(source.packetBytes(1)).toBe(640);
    expect(Buffer.from(source.packetBase64(1).toString(), 'base64')).toHaveLength(640);
  });

  it('keeps real samples in order across packets', () => {
    const pcm = Buffer.from(Array.from({ length: 6000 }, (_, i) => i % 251));
    const source = pcmPackets(pcm, 80);
    expect(source.packet_count).toBe(3);
    const joined = Buffer.concat([0, 1, 2].map((i) => Buffer.from(source.packetBase64(i).toString(), 'base64')));
    expect(joined).toEqual(pcm);
    expect(source.packetBytes(2)).toBe(6000 - 2 * 2560);
  });

  it('refuses a packet that is not a whole number of samples', () => {
    expect(() => silencePackets(1, 0.01)).toThrow(RangeError);
  });
});
