import { readVideoFrames, VideoError, type Sample, type VideoFrames } from '@duplex-bench/audio';
import { UsageError } from '@duplex-bench/cli';
import { decodeVideoToJpegs } from '@duplex-bench/launcher';
import { sendsCameraFrames } from '@duplex-bench/transport';
import type { DialectOptions } from './dialect-options';

/** Frames read from a directory or a video file (the launcher's ffmpeg decodes one); one that cannot be read is bad usage, said in one line led by `said` and naming the file. */
async function readCamera(path: string, fps: number | undefined, said?: string): Promise<VideoFrames> {
  try {
    return await readVideoFrames(path, fps, decodeVideoToJpegs, said);
  } catch (err) {
    if (err instanceof VideoError) throw new UsageError(err.message);
    throw err;
  }
}

/** `--video`'s frames read once for every session of the run. */
export async function withVideo<T extends DialectOptions>(opts: T): Promise<T> {
  if (opts.video_path === undefined) return opts;
  return { ...opts, video: await readCamera(opts.video_path, opts.video_fps) };
}

/** The samples' camera frames one recording holds in memory at most, base64 bytes. */
export const SAMPLE_CAMERA_LIMIT_BYTES = 1 << 30;

/**
 * The cameras of the samples to record (`NAME.frames/` or a video file beside each WAV, at
 * `--video-fps`), read whole before any session opens, errors naming the sample and the file, and
 * the name the summary gives the run's frames. A sample camera is sent by the dialects that send
 * frames (native, vllm-omni), and refused in one line by the others; frames over
 * SAMPLE_CAMERA_LIMIT_BYTES in all are refused too.
 */
export async function sampleCameras(samples: readonly Sample[], opts: { protocol: string; dataset?: string; video_fps?: number }) {
  const own = samples.filter((s) => s.video !== undefined);
  if (own.length > 0 && !sendsCameraFrames(opts.protocol)) {
    throw new UsageError(`--dataset ${opts.dataset}: ${own.length} samples have their own camera (${own[0].video}); camera frames are for --protocol native or vllm-omni`);
  }
  const frames = new Map<string, VideoFrames>();
  let held = 0;
  for (const sample of own) {
    const camera = await readCamera(sample.video as string, opts.video_fps, `--dataset sample ${sample.id}: camera`);
    held += camera.base64.reduce((n, b) => n + b.length, 0);
    if (held > SAMPLE_CAMERA_LIMIT_BYTES) throw new UsageError(`--dataset ${opts.dataset}: the samples' camera frames come to over ${SAMPLE_CAMERA_LIMIT_BYTES >> 20} MiB of base64 at ${sample.id}; give fewer or smaller frames, or a lower --video-fps`);
    frames.set(sample.id, camera);
  }
  return {
    frames,
    /** The summary's name for the frames sent: the run's `--video`, the samples' own, or both; null when none. */
    source(run_video: string | undefined): string | null {
      if (frames.size === 0) return run_video ?? null;
      const samples = `--dataset ${opts.dataset}: ${frames.size} samples' own cameras`;
      return run_video ? `${samples}, ${run_video} for the rest` : samples;
    },
  };
}
