import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeVideoToJpegs } from './decode-video';

describe('decodeVideoToJpegs', () => {
  it('gives ffmpeg\'s JPEG stream of a file at the rate asked (2 s at 3 a second: 6 start-of-image markers)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'decode-'));
    const file = join(dir, 'clip.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10', '-t', '2', '-pix_fmt', 'yuv420p', file]);
    const stream = await decodeVideoToJpegs(file, 3);
    let markers = 0;
    for (let i = stream.indexOf(Buffer.from([0xff, 0xd8, 0xff])); i >= 0; i = stream.indexOf(Buffer.from([0xff, 0xd8, 0xff]), i + 3)) markers++;
    expect(markers).toBe(6);
  });

  it('names the file ffmpeg cannot decode, in one line', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'decode-')), 'notes.mp4');
    await writeFile(file, 'not a video');
    await expect(decodeVideoToJpegs(file, 1)).rejects.toThrow(new RegExp(`^--video ${file}: ffmpeg could not decode it: .+`));
  });
});
