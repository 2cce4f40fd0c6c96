import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessPool } from '@duplex-bench/launcher';
import { postprocessSession, type PostprocessSummary, type PostprocessTask } from './postprocess';
import { POSTPROCESS_WORKER } from './recording';

describe('the post-processing worker', () => {
  let dir: string;
  let pool: ProcessPool;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postprocess-worker-'));
    // One worker process running this module, as the recorder's pool starts it.
    pool = new ProcessPool({ module: POSTPROCESS_WORKER, size: 1 });
  });
  afterAll(async () => {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("replays a session's trace in its own process: the summary it sends back is the one this process would make, and the WAV is written", async () => {
    const delta = (t: number) => ({ direction: 'receive', time_s: t, event: { type: 'response.output_audio.delta', response_id: 'r', delta: Buffer.alloc(4800).toString('base64') } });
    const lines = [
      { direction: 'send', time_s: 0, event: { type: 'input_audio_buffer.append' } },
      { direction: 'receive', time_s: 0.1, event: { type: 'response.created', response: { id: 'r' } } },
      delta(0.2),
      delta(0.3),
      { direction: 'receive', time_s: 0.4, event: { type: 'response.done', response: { id: 'r', status: 'completed' } } },
    ];
    await writeFile(join(dir, 'trace.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const task: PostprocessTask = { trace_path: join(dir, 'trace.jsonl'), wav_path: join(dir, 'output.wav'), output_sample_rate: 24000, protocol: 'openai' };
    expect(POSTPROCESS_WORKER).toBe(join(__dirname, 'postprocess-worker.ts'));
    const summary = await pool.run<PostprocessSummary>(task);
    expect(summary).toEqual({ events_received: 4, events_sent: 1, audio_deltas: 2, audio_bytes: 9600, audio_ms: 200, responses: 1, problems: [], wav: task.wav_path });
    const written = await readFile(task.wav_path);
    expect(written.length).toBe(44 + 9600);
    expect(await postprocessSession({ ...task, wav_path: join(dir, 'here.wav') })).toEqual({ ...summary, wav: join(dir, 'here.wav') });
  });

  it("sends a task's failure back as the pool's rejection, and serves the next task", async () => {
    await expect(pool.run({ trace_path: join(dir, 'none.jsonl'), wav_path: join(dir, 'x.wav'), output_sample_rate: 24000, protocol: 'openai' })).rejects.toThrow(/ENOENT/);
    await writeFile(join(dir, 'empty.jsonl'), '');
    await expect(pool.run<PostprocessSummary>({ trace_path: join(dir, 'empty.jsonl'), wav_path: join(dir, 'y.wav'), output_sample_rate: 24000, protocol: 'openai' })).resolves.toMatchObject({ events_received: 0, wav: null });
  });
});
