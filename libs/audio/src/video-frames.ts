import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** A camera's frames for every session of a run: JPEGs in order, each held once as base64 text. */
export interface VideoFrames {
  /** The directory or video file they came from. */
  source: string;
  /** Frames per second of media time they stand for: the decode rate of a file, `--video-fps` for a directory (null: not given). */
  fps: number | null;
  /** Each frame as base64 text in ASCII bytes, shared by every session (never changed). */
  base64: Buffer[];
  /** Each frame's JPEG size, bytes. */
  bytes: number[];
}

/** A camera input that cannot be read or is not JPEG: the message names the file. */
export class VideoError extends Error {
  override readonly name = 'VideoError';
}

/** Frames a directory may hold at most. */
export const VIDEO_LIMITS = { max_frames: 10_000 };

/** Decodes a video file to an MJPEG stream at `fps` (the launcher's ffmpeg); rejects with a one-line message naming the file. */
export type VideoDecoder = (file: string, fps: number) => Promise<Buffer>;

const JPEG_NAME = /\.jpe?g$/i;

function isJpeg(b: Buffer): boolean {
  return b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}

function framesOf(source: string, fps: number | null, jpegs: Buffer[]): VideoFrames {
  return { source, fps, base64: jpegs.map((j) => Buffer.from(j.toString('base64'), 'latin1')), bytes: jpegs.map((j) => j.length) };
}

/**
 * `--video DIR|FILE`: a directory's JPEG files in name order (each checked to be a JPEG), or a video
 * file `decode`d to JPEG frames at `fps` (default 1 per second). Throws VideoError, its message led
 * by `said` (the flag the path came from) and the path.
 */
export async function readVideoFrames(path: string, fps?: number, decode?: VideoDecoder, said = '--video'): Promise<VideoFrames> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new VideoError(`${said} ${path}: no such file or directory`);
  }
  if (info.isDirectory()) {
    const names = (await readdir(path)).filter((n) => JPEG_NAME.test(n)).sort();
    if (names.length === 0) throw new VideoError(`${said} ${path}: the directory holds no .jpg or .jpeg frames`);
    if (names.length > VIDEO_LIMITS.max_frames) throw new VideoError(`${said} ${path}: ${names.length} frames, more than ${VIDEO_LIMITS.max_frames}`);
    const jpegs: Buffer[] = [];
    for (const name of names) {
      const bytes = await readFile(join(path, name));
      if (!isJpeg(bytes)) throw new VideoError(`${said} ${join(path, name)}: not a JPEG (no start-of-image marker)`);
      jpegs.push(bytes);
    }
    return framesOf(path, fps ?? null, jpegs);
  }
  const rate = fps ?? 1;
  if (!decode) throw new VideoError(`${said} ${path}: a video file needs a decoder; give a directory of JPEG frames`);
  let stream: Buffer;
  try {
    stream = await decode(path, rate);
  } catch (err) {
    // The decoder names the file after `--video`; the path may have come from elsewhere.
    throw new VideoError((err as Error).message.replace(/^--video /, `${said} `));
  }
  return framesOf(path, rate, splitJpegs(path, stream, said));
}

/** The JPEGs of an MJPEG stream: each runs from a start-of-image marker (FF D8 FF) to the next. */
export function splitJpegs(file: string, stream: Buffer, said = '--video'): Buffer[] {
  const starts: number[] = [];
  for (let i = stream.indexOf(Buffer.from([0xff, 0xd8, 0xff])); i >= 0; i = stream.indexOf(Buffer.from([0xff, 0xd8, 0xff]), i + 3)) starts.push(i);
  if (starts.length === 0) throw new VideoError(`${said} ${file}: ffmpeg gave no frames`);
  return starts.map((s, k) => stream.subarray(s, k + 1 < starts.length ? starts[k + 1] : stream.length));
}
