import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readVideoFrames, splitJpegs, VideoError } from './video-frames';

/** ffmpeg's MJPEG stream, as the launcher's decoder gives it (specs may start processes). */
const ffmpeg = (file: string, fps: number) => Promise.resolve(execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-i', file, '-vf', `fps=${fps}`, '-q:v', '5', '-f', 'image2pipe', '-c:v', 'mjpeg', '-'], { maxBuffer: 64 * 2 ** 20 }));

/** A stand-in JPEG: the start-of-image marker, a body, the end marker (the reader checks the start). */
const jpeg = (n: number) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(n, 7), Buffer.from([0xff, 0xd9])]);

describe('readVideoFrames', () => {
  it("reads a directory's JPEG files in name order, each once as base64, with their sizes", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'frames-'));
    await writeFile(join(dir, 'b.jpg'), jpeg(20));
    await writeFile(join(dir, 'a.jpeg'), jpeg(10));
    await writeFile(join(dir, 'notes.txt'), 'not a frame');
    const v = await readVideoFrames(dir);
    expect(v).toMatchObject({ source: dir, fps: null, bytes: [16, 26] });
    expect(Buffer.from(v.base64[0].toString('latin1'), 'base64')).toEqual(jpeg(10));
    expect((await readVideoFrames(dir, 2)).fps).toBe(2);
  });

  it('names the file that is not a JPEG, and refuses an empty directory or a missing path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'frames-'));
    await expect(readVideoFrames(dir)).rejects.toThrow(/holds no \.jpg or \.jpeg frames/);
    await writeFile(join(dir, 'x.jpg'), 'PNG pretending');
    await expect(readVideoFrames(dir)).rejects.toThrow(new VideoError(`--video ${join(dir, 'x.jpg')}: not a JPEG (no start-of-image marker)`));
    await expect(readVideoFrames(join(dir, 'missing'))).rejects.toThrow(/no such file or directory/);
  });

  it('splits an MJPEG stream at each start-of-image marker', () => {
    expect(splitJpegs('f', Buffer.concat([jpeg(3), jpeg(5)])).map((j) => j.length)).toEqual([9, 11]);
    expect(() => splitJpegs('f', Buffer.from('nothing'))).toThrow(/ffmpeg gave no frames/);
  });

  it('decodes a video file with ffmpeg at the rate asked: 3 s at 2 frames a second is 6 JPEGs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'video-'));
    const file = join(dir, 'clip.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10', '-t', '3', '-pix_fmt', 'yuv420p', file]);
    const v = await readVideoFrames(file, 2, ffmpeg);
    expect(v.base64).toHaveLength(6);
    expect(v.fps).toBe(2);
    for (const b of v.base64) expect(Buffer.from(b.toString('latin1'), 'base64').subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    await expect(readVideoFrames(file)).rejects.toThrow(/a video file needs a decoder/);
    await expect(readVideoFrames(file, 1, () => Promise.reject(new Error(`--video ${file}: ffmpeg could not decode it`)))).rejects.toThrow(new VideoError(`--video ${file}: ffmpeg could not decode it`));
  });
});
