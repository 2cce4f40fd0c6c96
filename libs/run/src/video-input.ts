import { readVideoFrames, VideoError } from '@duplex-bench/audio';
import { UsageError } from '@duplex-bench/cli';
import { decodeVideoToJpegs } from '@duplex-bench/launcher';
import type { DialectOptions } from './dialect-options';

/** `--video`'s frames read once for every session of the run (a file decoded by the launcher's ffmpeg); a frame source that cannot be read is bad usage, said in one line naming it. */
export async function withVideo<T extends DialectOptions>(opts: T): Promise<T> {
  if (opts.video_path === undefined) return opts;
  try {
    return { ...opts, video: await readVideoFrames(opts.video_path, opts.video_fps, decodeVideoToJpegs) };
  } catch (err) {
    if (err instanceof VideoError) throw new UsageError(err.message);
    throw err;
  }
}
