import { join } from 'node:path';
import { speechDir } from '@duplex-bench/audio';
import { runPackets } from './open-sessions';

describe('runPackets', () => {
  it('streams any WAV given as --audio at the input rate, cut to the duration, and says what was done to it', async () => {
    // q1.wav is espeak-ng's 22,050 Hz mono: resampled to 16 kHz on load, its 2.4 s cut to 2 s.
    const file = join(speechDir(), 'q1.wav');
    const { packets, audio } = await runPackets({ audio: file, duration_s: 2, packet_ms: 80, sample_rate: 16000 });
    expect(packets.packet_count).toBe(25);
    expect(packets.packetBytes(0)).toBe(2560);
    expect(audio).toEqual({ file, conversion: expect.objectContaining({ file_rate: 22050, resampled: true, mixed: false, bits_per_sample: 16 }) });
  });

  it('streams silence without --audio, and records no input file', async () => {
    const { packets, audio } = await runPackets({ duration_s: 1, packet_ms: 80, sample_rate: 24000 });
    expect(packets.packet_count).toBe(13);
    expect(audio).toBeNull();
  });
});
