import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWavPcm16 } from '@duplex-bench/audio';
import { postprocessSession } from './postprocess';

describe('postprocessSession', () => {
  it('times and writes the output at the rate each delta states (vLLM-Omni), not the session\'s assumed rate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'postprocess-'));
    const delta = (n: number) => ({
      direction: 'receive',
      time_s: n,
      event: { type: 'response.output_audio.delta', response_id: 'r', delta: Buffer.alloc(4410).toString('base64'), format: 'pcm16', sample_rate_hz: 22050 },
    });
    const lines = [
      { direction: 'receive', time_s: 0, event: { type: 'response.created', response: { id: 'r' } } },
      delta(1),
      delta(2),
      { direction: 'receive', time_s: 3, event: { type: 'response.done', response: { id: 'r', status: 'completed' } } },
    ];
    await writeFile(join(dir, 'trace.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const s = await postprocessSession({ trace_path: join(dir, 'trace.jsonl'), wav_path: join(dir, 'out.wav'), output_sample_rate: 24000, protocol: 'vllm-omni' });
    // 2 x 4,410 bytes at 22,050 Hz: 200 ms (at the assumed 24,000 Hz it would read 183.75 ms).
    expect(s.audio_ms).toBeCloseTo(200, 9);
    expect(s.problems).toEqual([]);
    expect(parseWavPcm16(await readFile(join(dir, 'out.wav')), 'out.wav', 22050)).toHaveLength(8820);
  });
});
