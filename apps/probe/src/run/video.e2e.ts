import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWavPcm16 } from '@duplex-bench/audio';
import { UsageError } from '@duplex-bench/cli';
import { startMockServer, type MockServerOptions } from '@duplex-bench/mock-servers';
import { recordCommand } from '../record/record-command';
import { parseRecordOptions } from '../record/record-options';
import { EventEmitter } from 'node:events';
import { chromium } from 'playwright-core';
import { writeReport } from '@duplex-bench/report';
import { probe } from './run-harness.spec-helpers';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';

jest.setTimeout(60_000);

/** Debian's chromium; `.ci/run` installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The run's report, opened in Chromium: its camera table, header to cell. */
async function cameraRow(dir: string): Promise<Record<string, string>> {
  await writeReport(dir);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`file://${join(dir, 'report.html')}`);
    await page.waitForFunction(() => (globalThis as unknown as { reportReady?: boolean }).reportReady === true, null, { timeout: 15_000 });
    return await page.$$eval('section', (sections) => {
      type Node = { textContent: string | null; querySelectorAll(s: string): ArrayLike<Node>; querySelector(s: string): Node | null };
      const camera = (sections as unknown as Node[]).find((s) => (s.querySelector('h2,h3')?.textContent ?? '').startsWith('Camera frames'));
      if (!camera) return {};
      const heads = Array.from(camera.querySelectorAll('th')).map((h) => h.textContent ?? '');
      const cells = Array.from(camera.querySelectorAll('td')).map((c) => c.textContent ?? '');
      return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
    });
  } finally {
    await browser.close();
  }
}

/** One JPEG a second for `seconds`, made by ffmpeg from its test pattern, in a directory of their own. */
async function frameDir(seconds: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'camera-'));
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=1`, '-t', String(seconds), '-q:v', '5', join(dir, 'f%03d.jpg')]);
  return dir;
}

const VLLM: MockServerOptions = { port: 0, protocol: 'openai', profile: 'model', input_sample_rate: 16000, model: { ttfp_ms: 100, rtf: 0.5 }, openai: { flavor: 'vllm-omni' } };

describe('run --video: camera frames as each server takes them', () => {
  let frames: string;
  let clip: string;
  beforeAll(async () => {
    frames = await frameDir(3);
    clip = join(await mkdtemp(join(tmpdir(), 'clip-')), 'clip.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '3', '-pix_fmt', 'yuv420p', clip]);
  });

  it("native: one frame per unit before the unit's first packet when the grant lists image input, each a JPEG the server took", async () => {
    const mock = await startMockServer({ port: 0, profile: 'minicpmo', images: {} });
    try {
      const { code, summary, stdout, stderr, dir } = await probe(mock.url, ['--concurrency', '2', '--duration', '3', '--video', frames, '--allow-unqualified']);
      expect(code).toBe(0);
      expect(`${stdout}${stderr}`).toMatch(new RegExp(`camera frames \\(${frames}\\): 6 sent, [0-9.]+ KiB of JPEG`));
      // 1 s units: units 0, 1 and 2 of each session.
      expect(summary.video).toMatchObject({ source: frames, frames_sent: 6 });
      expect(mock.stats().frames).toMatchObject({ accepted: 6, refused: 0, bytes: summary.video?.frame_bytes });
      // The run's page shows the frames in the server part, as a person reads it in Chromium.
      if (existsSync(CHROMIUM)) expect(await cameraRow(dir)).toEqual({ 'frames sent': '6', 'JPEG bytes': String(summary.video?.frame_bytes), 'bytes per frame': String(Math.round((summary.video?.frame_bytes ?? 0) / 6)) });
    } finally {
      await mock.close();
    }
  });

  it('native: a server that grants no image input, or frames past its count, fails the run in one line before any packet', async () => {
    for (const [images, said] of [
      [undefined, /^error: --video: the server grants no image input \(input_modalities: \["audio"\]\)$/m],
      [{ max_per_unit: 1 }, /^error: --video-fps 2: 2 frames per 1000 ms unit; the server takes at most 1$/m],
    ] as const) {
      const mock = await startMockServer({ port: 0, profile: 'minicpmo', ...(images ? { images } : {}) });
      try {
        let stderr = '';
        const io = { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s), isTTY: false }, signals: new EventEmitter(), exitNow: () => undefined as never, argv: [] };
        const out = await mkdtemp(join(tmpdir(), 'camera-run-'));
        const fps = images ? ['--video-fps', '2'] : [];
        const code = await runCommand(parseRunOptions(['--url', mock.url, '--output', out, '--quiet', '--concurrency', '2', '--duration', '1', '--video', frames, ...fps]), io);
        expect({ code, stderr }).toEqual({ code: 1, stderr: expect.stringMatching(said) });
        expect(mock.stats().appends).toBe(0);
      } finally {
        await mock.close();
      }
    }
  });

  it("record --dataset: each sample's own camera beside its WAV (a frame directory or a video file), sent only in its own session; a camera that is no JPEG is refused in one line before any session", async () => {
    const dataset = await mkdtemp(join(tmpdir(), 'camera-dataset-'));
    const wav = encodeWavPcm16(Buffer.alloc(3 * 32_000), 16_000);
    for (const name of ['a', 'b', 'c']) await writeFile(join(dataset, `${name}.wav`), wav);
    execFileSync('cp', ['-r', frames, join(dataset, 'a.frames')]);
    execFileSync('cp', [clip, join(dataset, 'b.mp4')]);
    const mock = await startMockServer({ port: 0, profile: 'minicpmo', images: {} });
    const quiet = () => ({ stdout: { write: () => true }, stderr: { write: () => true }, signals: new EventEmitter(), exitNow: () => undefined as never, argv: [] });
    try {
      const out = await mkdtemp(join(tmpdir(), 'camera-record-'));
      const code = await recordCommand(parseRecordOptions(['--url', mock.url, '--output', out, '--dataset', dataset, '--concurrency', '3', '--trace', 'off', '--postprocess', 'off', '--allow-unqualified']), quiet());
      expect(code).toBe(0);
      const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
      // 1 s units, 3 s of input: a's three JPEGs and b's clip decoded at one a second, one frame a unit each; c sends none.
      expect(summary.video).toMatchObject({ source: `--dataset ${dataset}: 2 samples' own cameras`, frames_sent: 6 });
      expect(mock.stats().frames).toMatchObject({ accepted: 6, refused: 0, bytes: summary.video.frame_bytes });
      const sample = async (id: string) => JSON.parse(await readFile(join(out, 'samples', `${id}.json`), 'utf8'));
      expect((await sample('a')).camera).toBe(join(dataset, 'a.frames'));
      expect((await sample('b')).camera).toBe(join(dataset, 'b.mp4'));
      expect((await sample('c')).camera).toBeUndefined();
      // A camera frame that is no JPEG: the sample and the file named, before any session.
      await mkdir(join(dataset, 'c.frames'));
      await writeFile(join(dataset, 'c.frames', 'f001.jpg'), 'not a jpeg');
      const appends = mock.stats().appends;
      const again = await mkdtemp(join(tmpdir(), 'camera-record-'));
      await expect(recordCommand(parseRecordOptions(['--url', mock.url, '--output', again, '--dataset', dataset, '--concurrency', '3', '--allow-unqualified']), quiet())).rejects.toThrow(
        new UsageError(`--dataset sample c: camera ${join(dataset, 'c.frames', 'f001.jpg')}: not a JPEG (no start-of-image marker)`),
      );
      expect(mock.stats().appends).toBe(appends);
    } finally {
      await mock.close();
    }
  });

  it("vllm-omni: frames (from a video file) on the appends when the session lists video (the server's default capabilities), and as at most 8 live input_image items when it lists image input", async () => {
    for (const image_items of [false, true]) {
      const mock = await startMockServer({ ...VLLM, openai: { ...VLLM.openai, image_items } });
      try {
        // Items: the directory at 4 frames a second; appends: a video file decoded by ffmpeg at its default 1.
        const video = image_items ? ['--video', frames, '--video-fps', '4'] : ['--video', clip];
        const { code, summary } = await probe(mock.url, ['--protocol', 'vllm-omni', '--model', 'm', '--concurrency', '1', '--duration', '3', ...video, '--allow-unqualified']);
        expect({ image_items, code }).toEqual({ image_items, code: 0 });
        const sent = summary.video?.frames_sent ?? 0;
        // Appends: 3 s of audio closes the model units at 1030 and 2030 ms, not a third (3030).
        expect(sent).toBe(image_items ? 12 : 2);
        // The mock refuses an item past 8 live images (input_backpressure): none was refused.
        expect(mock.stats().frames).toEqual({ accepted: sent, refused: 0, bytes: summary.video?.frame_bytes });
        if (image_items) expect(summary.video?.image_items_deleted).toBe(4);
      } finally {
        await mock.close();
      }
    }
  });
});
