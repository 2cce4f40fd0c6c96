import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticDataset, syntheticPackets, syntheticPcm, wavDataset } from './dataset';
import { encodeWavPcm16 } from './wav';

describe('datasets', () => {
  it('makes 4 subsets x K samples in both variants, 20-60 s, the same every time', () => {
    const a = syntheticDataset({ per_subset: 8, min_input_s: 20, max_input_s: 60 });
    expect(a).toHaveLength(4 * 8 * 2);
    expect(new Set(a.map((s) => s.id)).size).toBe(64);
    for (const s of a) {
      expect(s.duration_s).toBeGreaterThanOrEqual(20 - 0.04);
      expect(s.duration_s).toBeLessThanOrEqual(60 + 0.04);
    }
    expect(syntheticDataset({ per_subset: 8, min_input_s: 20, max_input_s: 60 })).toEqual(a);
    expect(syntheticPcm(a[0]).equals(syntheticPcm(a[0]))).toBe(true);
    expect(syntheticPcm(a[0]).length).toBe(Math.round(a[0].duration_s * 16000) * 2);
  });

  it('reads a directory of WAV files, subdirectories as subsets, resamples any other rate, and refuses a file that is no WAV by name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dataset-'));
    await mkdir(join(dir, 'qa'));
    await writeFile(join(dir, 'qa', 'one.wav'), encodeWavPcm16(Buffer.alloc(32000), 16000));
    await writeFile(join(dir, 'two.wav'), encodeWavPcm16(Buffer.alloc(16000), 16000));
    const samples = await wavDataset(dir);
    expect(samples.map((s) => [s.id, s.subset, s.duration_s])).toEqual([
      ['qa_one', 'qa', 1],
      ['two', 'wav', 0.5],
    ]);
    expect(samples.every((s) => s.conversion === undefined)).toBe(true);
    await writeFile(join(dir, 'three.wav'), encodeWavPcm16(Buffer.alloc(44100 * 2), 44100));
    const three = (await wavDataset(dir)).find((s) => s.id === 'three');
    expect(three?.duration_s).toBeCloseTo(1, 3);
    expect(three?.conversion).toMatchObject({ file_rate: 44100, resampled: true, mixed: false });
    await writeFile(join(dir, 'four.wav'), 'not a wav');
    await expect(wavDataset(dir)).rejects.toThrow(`${join(dir, 'four.wav')}: expected`);
  });

  it("finds each WAV's own camera beside it: NAME.frames/ first, else a video file of the same name; a frame directory is no subset", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dataset-camera-'));
    const wav = encodeWavPcm16(Buffer.alloc(16000), 16000);
    for (const name of ['a.wav', 'b.wav', 'c.wav', 'd.wav', 'b.mp4', 'c.MOV', 'd.txt']) await writeFile(join(dir, name), name.endsWith('.wav') ? wav : 'x');
    await mkdir(join(dir, 'a.frames'));
    await writeFile(join(dir, 'a.frames', 'inner.wav'), wav);
    await writeFile(join(dir, 'a.mp4'), 'x');
    const samples = await wavDataset(dir);
    expect(samples.map((s) => [s.id, s.video])).toEqual([
      ['a', join(dir, 'a.frames')],
      ['b', join(dir, 'b.mp4')],
      ['c', join(dir, 'c.MOV')],
      ['d', undefined],
    ]);
  });
});

describe('syntheticPackets', () => {
  it('streams whole packets of the shared period from an offset set by the seed, without making the audio', () => {
    const [a, b] = syntheticDataset({ per_subset: 1, min_input_s: 20, max_input_s: 60 });
    const pa = syntheticPackets(a, 80);
    expect(pa.packet_count).toBe(Math.round(a.duration_s / 0.08));
    expect(pa.packetBytes(pa.packet_count - 1)).toBe(2560);
    expect(Buffer.from(pa.packetBase64(7).toString(), 'base64')).toHaveLength(2560);
    // The period repeats every 4 s (50 packets); another seed starts elsewhere in it.
    expect(pa.packetBase64(3)).toBe(pa.packetBase64(53));
    const pb = syntheticPackets(b, 80);
    expect(Array.from({ length: 50 }, (_, i) => pb.packetBase64(i))).not.toEqual(Array.from({ length: 50 }, (_, i) => pa.packetBase64(i)));
  });
});
