import { UsageError } from '@duplex-bench/cli';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sample } from '@duplex-bench/audio';
import { sampleCameras } from './video-input';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]);
const sample = (id: string, video?: string): Sample => ({ id, subset: 'wav', variant: `${id}.wav`, duration_s: 1, file: `/d/${id}.wav`, seed: 0, ...(video ? { video } : {}) });

describe('sampleCameras', () => {
  it("reads each sample's own frames before the run, and names them in the summary beside the run's --video", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cameras-'));
    await mkdir(join(dir, 'a.frames'));
    await writeFile(join(dir, 'a.frames', '1.jpg'), JPEG);
    await writeFile(join(dir, 'a.frames', '2.jpg'), JPEG);
    const cams = await sampleCameras([sample('a', join(dir, 'a.frames')), sample('b')], { protocol: 'native', dataset: dir });
    expect([...cams.frames.keys()]).toEqual(['a']);
    expect(cams.frames.get('a')?.bytes).toEqual([6, 6]);
    expect(cams.source(undefined)).toBe(`--dataset ${dir}: 1 samples' own cameras`);
    expect(cams.source('/run/frames')).toBe(`--dataset ${dir}: 1 samples' own cameras, /run/frames for the rest`);
    const none = await sampleCameras([sample('b')], { protocol: 'openai', dataset: dir });
    expect([none.source(undefined), none.source('/run/frames')]).toEqual([null, '/run/frames']);
  });

  it('refuses a dataset with cameras for a dialect that sends no frames, in one line naming one', async () => {
    await expect(sampleCameras([sample('a', '/d/a.frames')], { protocol: 'openai', dataset: '/d' })).rejects.toThrow(
      new UsageError('--dataset /d: 1 samples have their own camera (/d/a.frames); camera frames are for --protocol native or vllm-omni'),
    );
  });
});
