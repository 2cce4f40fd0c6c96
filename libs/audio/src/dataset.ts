import { readdir } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { pcmPackets, type PacketSource } from './packets';
import { readWavAs, type WavConversion } from './wav';

/** One input of a recording: what is streamed, and where it came from. */
export interface Sample {
  /** Stable across runs (resume matches on it): subset, index, variant. */
  id: string;
  subset: string;
  variant: string;
  duration_s: number;
  /** A WAV file, or null for synthetic audio. */
  file: string | null;
  /** Seed of the synthetic audio. */
  seed: number;
  /** A WAV file that was not mono PCM16 at the input rate: what was done to it on load. */
  conversion?: WavConversion;
  /** The sample's own camera: a directory of JPEG frames or a video file beside its WAV (`datasetCamera`). */
  video?: string;
}

/** Video files a WAV's camera may be, by extension (decoded by ffmpeg). */
export const CAMERA_VIDEO_EXTENSIONS = ['.mp4', '.mkv', '.webm', '.mov', '.avi'];
/** A WAV's frame directory: `NAME.frames/` beside `NAME.wav`. */
export const CAMERA_DIR_SUFFIX = '.frames';

/**
 * The camera of `NAME.wav` in a dataset: the directory `NAME.frames/` (JPEG frames in name order)
 * or the video file `NAME.mp4` (or .mkv, .webm, .mov, .avi) beside it; the directory first. `names`
 * are the entries of the WAV's directory, directories marked.
 */
export function datasetCamera(wav: string, names: ReadonlyMap<string, boolean>): string | undefined {
  const stem = basename(wav).replace(/\.wav$/i, '');
  const dir = dirname(wav);
  if (names.get(`${stem}${CAMERA_DIR_SUFFIX}`) === true) return join(dir, `${stem}${CAMERA_DIR_SUFFIX}`);
  for (const ext of CAMERA_VIDEO_EXTENSIONS) {
    for (const name of [`${stem}${ext}`, `${stem}${ext.toUpperCase()}`]) if (names.get(name) === false) return join(dir, name);
  }
  return undefined;
}

export interface SyntheticOptions {
  per_subset: number;
  min_input_s: number;
  max_input_s: number;
  subsets?: string[];
  variants?: string[];
}

export const SYNTHETIC_SUBSETS = ['chat', 'qa', 'interrupt', 'long'];
export const SYNTHETIC_VARIANTS = ['a', 'b'];

/** A number in [0, 1) from an integer, the same on every run. */
function unit(seed: number): number {
  let x = (seed ^ 0x9e3779b9) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32;
}

/**
 * The synthetic dataset: `subsets` × `per_subset` samples, each in every variant, with input lengths
 * spread over [min_input_s, max_input_s] (whole packets of 80 ms), the same on every run.
 */
export function syntheticDataset(o: SyntheticOptions): Sample[] {
  const subsets = o.subsets ?? SYNTHETIC_SUBSETS;
  const variants = o.variants ?? SYNTHETIC_VARIANTS;
  const out: Sample[] = [];
  subsets.forEach((subset, si) => {
    for (let i = 0; i < o.per_subset; i++) {
      const seed = si * 100_003 + i;
      const raw_s = o.min_input_s + unit(seed) * (o.max_input_s - o.min_input_s);
      const duration_s = Math.round(raw_s / 0.08) * 0.08;
      for (const variant of variants) {
        out.push({ id: `${subset}-${String(i).padStart(3, '0')}-${variant}`, subset, variant, duration_s, file: null, seed: seed * 7 + variant.charCodeAt(0) });
      }
    }
  });
  return out;
}

/**
 * Quiet noise with a pause every few seconds, 16-bit mono: input that is not silence, so a server's
 * voice activity detection has something to work on. Deterministic from the sample's seed.
 */
export function syntheticPcm(sample: Sample, sample_rate = 16000): Buffer {
  const n = Math.round(sample.duration_s * sample_rate);
  const pcm = Buffer.alloc(n * 2);
  let x = sample.seed >>> 0 || 1;
  const period = 4 * sample_rate;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const speaking = i % period < period * 0.7;
    pcm.writeInt16LE(speaking ? ((x >>> 16) % 2001) - 1000 : 0, i * 2);
  }
  return pcm;
}

/**
 * A directory of WAV files as a dataset (subdirectories become subsets). Any PCM or float WAV is
 * taken, mixed to mono and resampled to `sample_rate` (each sample says so in `conversion`); the
 * first file that is no such WAV is refused with its name and what was found. A WAV may have a
 * camera beside it (`datasetCamera`): the sample's `video`. A frame directory is not a subset.
 */
export async function wavDataset(dir: string, sample_rate = 16000): Promise<Sample[]> {
  const files: Array<{ path: string; camera: string | undefined }> = [];
  async function walk(d: string): Promise<void> {
    const entries = await readdir(d, { withFileTypes: true });
    const names = new Map(entries.map((e) => [e.name, e.isDirectory()]));
    for (const entry of entries) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.endsWith(CAMERA_DIR_SUFFIX)) await walk(path);
      } else if (entry.name.toLowerCase().endsWith('.wav')) files.push({ path, camera: datasetCamera(path, names) });
    }
  }
  await walk(dir);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const out: Sample[] = [];
  for (const [i, { path: file, camera }] of files.entries()) {
    const { pcm, conversion } = await readWavAs(file, sample_rate);
    const rel = relative(dir, file);
    const subset = rel.includes(sep) ? rel.split(sep)[0] : 'wav';
    const id = rel.replace(/\.wav$/i, '').replace(/[^A-Za-z0-9_.-]+/g, '_');
    const converted = conversion.resampled || conversion.mixed || conversion.format !== 'pcm' || conversion.bits_per_sample !== 16;
    out.push({ id, subset, variant: basename(file), duration_s: pcm.length / 2 / sample_rate, file, seed: i, ...(converted ? { conversion } : {}), ...(camera ? { video: camera } : {}) });
  }
  return out;
}

const PERIOD_S = 4;
const periods = new Map<string, PacketSource>();

/**
 * A synthetic sample's packets without making its audio: every sample streams the same 4 s period of
 * syntheticPcm (encoded once per packet length and rate), from an offset given by its seed. Making
 * each sample's 20-60 s of PCM and base64 as its session opened took the loop while other sessions
 * streamed (record at 64 sessions: max deviation 46 ms while the second wave started).
 */
export function syntheticPackets(sample: Sample, packet_ms: number, sample_rate = 16000): PacketSource {
  const key = `${packet_ms}/${sample_rate}`;
  let period = periods.get(key);
  if (!period) {
    period = pcmPackets(syntheticPcm({ id: 'period', subset: '', variant: '', duration_s: PERIOD_S, file: null, seed: 1 }, sample_rate), packet_ms, sample_rate);
    periods.set(key, period);
  }
  const base = period;
  const n = base.packet_count;
  const offset = sample.seed % n;
  const packet_count = Math.round((sample.duration_s * 1000) / packet_ms);
  const packet_bytes = base.packetBytes(0);
  return {
    packet_ms,
    sample_rate,
    packet_count,
    total_bytes: packet_count * packet_bytes,
    packetBytes: () => packet_bytes,
    packetBase64: (seq) => base.packetBase64((offset + seq) % n),
  };
}
