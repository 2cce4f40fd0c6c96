import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWavPcm16, syntheticDataset, syntheticPackets } from '@duplex-bench/audio';
import type { ProcessPool } from '@duplex-bench/launcher';
import { SampleStore } from '@duplex-bench/metrics';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import { sampleRecordFile, sessionFile } from '@duplex-bench/results';
import type { TraceWriterStats } from '@duplex-bench/tracer';
import { ProcessMeasures } from '../process-measures';
import { writeAttemptPacing } from './attempt-pacing';
import type { PostprocessSummary, PostprocessTask } from './postprocess';
import { conversationDataset, postprocessRecorded, postprocessTask, recordingDataset, recordingSummary, samplePackets } from './recording';
import type { SampleResult } from './sample-results';

const TRACE: TraceWriterStats = { batches: 1, bytes_written: 10, backlog_peak_bytes: 0, max_batch_write_ms: 0, high_water_crossings: 0 };

const record = (sample_id: string, over: Partial<SampleResult> = {}): SampleResult => ({
  sample_id,
  subset: 's',
  variant: 'v',
  duration_s: 1,
  completed: true,
  violation: false,
  packets_sent: 3,
  late: 0,
  server_errors: 0,
  ...over,
});

describe('recording', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'recording-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('recordingDataset', () => {
    const base = { duration_s: 4, sample_rate: 16000, per_subset: 2, min_input_s: 1, max_input_s: 3 };

    it('without --dataset, the synthetic set of per_subset samples a subset', async () => {
      expect(await recordingDataset(base)).toEqual(syntheticDataset({ per_subset: 2, min_input_s: 1, max_input_s: 3 }));
    });

    it("with --conversation, per_subset sessions of the script, the script's length each", async () => {
      expect(await recordingDataset({ ...base, conversation: 'default', dataset: 'ignored' })).toEqual(conversationDataset('default', 2, 4));
    });

    it('reads the WAV files of --dataset at the input rate', async () => {
      await mkdir(join(dir, 'long'));
      await writeFile(join(dir, 'long', 'q 1.wav'), encodeWavPcm16(Buffer.alloc(16000), 8000));
      const [s] = await recordingDataset({ ...base, dataset: dir });
      expect(s).toMatchObject({ id: 'long_q_1', subset: 'long', variant: 'q 1.wav', file: join(dir, 'long', 'q 1.wav'), duration_s: 1 });
    });

    it('refuses a --dataset it cannot read with a coded error naming the flag', async () => {
      await expect(recordingDataset({ ...base, dataset: join(dir, 'none') })).rejects.toMatchObject({ name: 'RunInputError', code: 'BAD_DATASET', message: expect.stringMatching(/^--dataset: .*ENOENT/) });
      await writeFile(join(dir, 'bad.wav'), 'not a wav');
      await expect(recordingDataset({ ...base, dataset: dir })).rejects.toMatchObject({ code: 'BAD_DATASET' });
    });
  });

  describe('samplePackets', () => {
    it("streams a WAV sample's audio at the input rate, in packets", async () => {
      const pcm = Buffer.alloc(8000 * 2);
      for (let i = 0; i < 8000; i++) pcm.writeInt16LE(i % 200, i * 2);
      const file = join(dir, 'a.wav');
      await writeFile(file, encodeWavPcm16(pcm, 16000));
      const p = await samplePackets({ id: 'a', subset: 'wav', variant: 'a.wav', duration_s: 0.5, file, seed: 0 }, 80, 16000);
      expect(p.packet_count).toBe(7);
      expect(p.packetBytes(0)).toBe(2560);
      expect(p.packetBytes(6)).toBe(16000 - 6 * 2560);
      expect(Buffer.from(p.packetBase64(1).toString('latin1'), 'base64')).toEqual(pcm.subarray(2560, 5120));
    });

    it("streams a synthetic sample's signal from its seed", async () => {
      const sample = syntheticDataset({ per_subset: 1, min_input_s: 1, max_input_s: 1 })[0];
      const p = await samplePackets(sample, 80, 16000);
      const expected = syntheticPackets(sample, 80, 16000);
      expect(p.packet_count).toBe(expected.packet_count);
      expect(p.packetBase64(3)).toEqual(expected.packetBase64(3));
    });
  });

  describe('postprocessTask', () => {
    it("reads the session's trace and writes its output.wav in its own directory", () => {
      expect(postprocessTask(dir, 'q-1', 24000, 'openai', 5)).toEqual({
        trace_path: sessionFile(dir, 'q-1', 'trace'),
        wav_path: sessionFile(dir, 'q-1', 'output'),
        output_sample_rate: 24000,
        protocol: 'openai',
        burn_ms: 5,
      });
    });
  });

  describe('postprocessRecorded', () => {
    const stored = async (id: string) => JSON.parse(await readFile(sampleRecordFile(dir, id), 'utf8')) as SampleResult;

    it('without a pool, replays the trace on this loop and adds its summary to the stored record', async () => {
      const task = postprocessTask(dir, 'q-1', 24000, 'openai');
      await mkdir(join(dir, 'sessions', 'q-1'), { recursive: true });
      const lines = [
        { direction: 'send', time_s: 0, event: { type: 'input_audio_buffer.append' } },
        { direction: 'receive', time_s: 1, event: { type: 'response.created', response: { id: 'r' } } },
      ];
      await writeFile(task.trace_path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      await postprocessRecorded(dir, record('q-1'), task, null);
      const r = await stored('q-1');
      expect(r.postprocess).toMatchObject({ events_sent: 1, events_received: 1, responses: 1, problems: ['responses never done: r'], wav: null });
      expect(r).not.toHaveProperty('postprocess_error');
    });

    it('with a pool, hands the task to it and keeps what it sends back', async () => {
      const summary: PostprocessSummary = { events_received: 9, events_sent: 4, audio_deltas: 2, audio_bytes: 96, audio_ms: 2, responses: 1, problems: [], wav: 'x.wav' };
      const tasks: unknown[] = [];
      const pool = { run: (t: unknown) => (tasks.push(t), Promise.resolve(summary)) } as unknown as ProcessPool;
      const task = postprocessTask(dir, 'q-2', 24000, 'native');
      await postprocessRecorded(dir, record('q-2', { late: 2 }), task, pool);
      expect(tasks).toEqual([task]);
      expect(await stored('q-2')).toEqual({ ...record('q-2', { late: 2 }), postprocess: summary });
    });

    it("stores the failure's message in place of a summary when post-processing fails", async () => {
      const task: PostprocessTask = postprocessTask(dir, 'q-3', 24000, 'openai');
      await postprocessRecorded(dir, record('q-3'), task, null);
      const r = await stored('q-3');
      expect(r.postprocess_error).toMatch(/ENOENT/);
      expect(r).not.toHaveProperty('postprocess');
    });
  });

  describe('recordingSummary', () => {
    let time: VirtualTime;
    let measures: ProcessMeasures;
    beforeEach(() => {
      time = new VirtualTime();
      measures = new ProcessMeasures(80, time);
    });
    afterEach(() => measures.stop());

    /** Writes `n` packets of sample `id`, each `late_ms` after its slot but the first, as an attempt's file. */
    async function attempt(id: string, n: number, late_ms: number): Promise<string> {
      const store = new SampleStore(80);
      const c = store.open(id);
      for (let seq = 0; seq < n; seq++) {
        const start_s = seq * 0.08 + (seq === 0 ? 0 : late_ms / 1000);
        c.push({ seq, scheduled_s: seq * 0.08, start_s, completed_s: start_s, send_ms: 0.1, buffered_bytes: 0 });
      }
      return (await writeAttemptPacing(dir, id, store, 80)) as string;
    }

    it("pools the packets of the stored attempts, not this invocation's, and takes the longest input as the duration", async () => {
      const a = await attempt('a', 3, 1);
      const b = await attempt('b', 4, 200);
      const kept = [record('a', { pacing_file: a, duration_s: 1.2 }), record('b', { pacing_file: b, duration_s: 2.4, completed: false, reason: 'server_closed' })];
      const { summary, sessions, samples } = await recordingSummary(dir, kept, measures, { packet_ms: 80, interrupted: false, trace: TRACE });
      expect(summary.packets).toEqual({ sent: 7, late: 3 });
      expect(summary.qualified).toBe(false);
      expect(summary.duration_s).toBe(2.4);
      expect(summary.warmup_s).toBe(0);
      expect(summary.sessions).toMatchObject({ started: 2, completed: 1, incomplete_reasons: { server_closed: 1 } });
      expect(sessions.map((s) => s.id)).toEqual(['a', 'b']);
      expect(samples.sessions.map((s) => s.id)).toEqual(['a', 'b']);
      expect(summary.measurement_origin).toMatchObject({ duration_s: 'record: the longest input among the samples reported, seconds' });
      expect(summary.measurement_origin).not.toHaveProperty('packets');
    });

    it("gives the CPU per packet of this invocation's packets, and none when it sent none", async () => {
      const a = await attempt('a', 5, 0);
      const kept = [record('a', { pacing_file: a })];
      const none = await recordingSummary(dir, kept, measures, { packet_ms: 80, interrupted: false, trace: TRACE });
      expect(none.summary.cpu_us_per_packet).toBeNull();
      for (let seq = 0; seq < 2; seq++) measures.pacing.record({ seq, scheduled_s: seq * 0.08, start_s: seq * 0.08, completed_s: seq * 0.08, send_ms: 0, buffered_bytes: 0 }, 0);
      const { summary } = await recordingSummary(dir, kept, measures, { packet_ms: 80, interrupted: true, trace: TRACE });
      const cpu_s = summary.cpu_cores.cpu_s as number;
      expect(cpu_s).toBeGreaterThan(0);
      // Over this invocation's 2 packets, not the 5 stored.
      expect(summary.cpu_us_per_packet).toBe(Math.round((cpu_s / 2) * 1e7) / 10);
      expect(summary.interrupted).toBe(true);
    });

    it('says how many stored samples have no packet file, whose packets the pacing figures lack', async () => {
      const a = await attempt('a', 2, 0);
      const { summary } = await recordingSummary(dir, [record('a', { pacing_file: a }), record('b'), record('c')], measures, { packet_ms: 80, interrupted: false, trace: TRACE });
      expect(summary.packets.sent).toBe(2);
      expect(summary.measurement_origin.packets).toMatch(/^2 stored sample\(s\) have no packet file/);
    });
  });
});
