import { pcmPackets, silencePackets, withTrailingSilence } from './packets';

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

  it('adds whole packets of silence after a source (rounded up), and ends with a source that ends early', () => {
    const speech = pcmPackets(Buffer.alloc(2560 * 2 + 640, 1), 80);
    const tailed = withTrailingSilence(speech, 1500);
    expect(tailed.packet_count).toBe(3 + 19);
    expect(tailed.total_bytes).toBe(2560 * 2 + 640 + 19 * 2560);
    expect(tailed.packetBytes(2)).toBe(640);
    expect(tailed.packetBase64(1)).toBe(speech.packetBase64(1));
    expect(Buffer.from(tailed.packetBase64(21).toString('latin1'), 'base64')).toEqual(Buffer.alloc(2560));
    expect(withTrailingSilence(speech, 0)).toBe(speech);
    const early = withTrailingSilence({ ...speech, inputOverAt: (seq: number) => seq >= 2 }, 160);
    expect([early.inputOverAt?.(1), early.inputOverAt?.(2), early.inputOverAt?.(3)]).toEqual([false, true, false]);
  });
});
