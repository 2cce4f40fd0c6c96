import { spawn } from 'node:child_process';

/** How a video file is decoded at most: frames, and time. */
export const DECODE_LIMITS = { max_frames: 10_000, timeout_ms: 120_000 };

/**
 * `file` decoded by ffmpeg to a stream of JPEGs (MJPEG) at `fps` frames a second, bounded in frames
 * and time. Rejects with a one-line message naming the file: ffmpeg missing, a file it cannot decode,
 * or a decode past the bound (the process is killed).
 */
export function decodeVideoToJpegs(file: string, fps: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const args = ['-nostdin', '-v', 'error', '-i', file, '-vf', `fps=${fps}`, '-frames:v', String(DECODE_LIMITS.max_frames), '-q:v', '5', '-f', 'image2pipe', '-c:v', 'mjpeg', '-'];
    const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), DECODE_LIMITS.timeout_ms);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new Error(e.code === 'ENOENT' ? `--video ${file}: decoding a video file needs ffmpeg (tools/setup.sh installs it), or give a directory of JPEG frames` : `--video ${file}: ffmpeg: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out));
      else if (signal) reject(new Error(`--video ${file}: ffmpeg did not finish within ${DECODE_LIMITS.timeout_ms / 1000} s`));
      else reject(new Error(`--video ${file}: ffmpeg could not decode it: ${err.trim().split('\n').pop() || `exit ${code}`}`));
    });
  });
}
