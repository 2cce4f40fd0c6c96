import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { encodeWavPcm16 } from '@duplex-bench/audio';

export interface PostprocessTask {
  trace_path: string;
  wav_path: string;
  output_sample_rate: number;
  /** The openai dialect has no end-of-input event: `drained` is checked for native sessions only. */
  protocol: 'native' | 'openai';
  /** Test hook: CPU burnt per task, as heavy validation would. */
  burn_ms?: number;
}

/** The small summary a worker sends back; the trace itself never crosses to the recorder. */
export interface PostprocessSummary {
  events_received: number;
  events_sent: number;
  audio_deltas: number;
  audio_bytes: number;
  audio_ms: number;
  responses: number;
  problems: string[];
  wav: string | null;
}

const AUDIO = new Set(['response.output_audio.delta', 'response.audio.delta']);

/**
 * Replays one finished session's trace: rebuilds its output audio as a WAV and checks the order
 * the dialect promises (chunk_seq counting up, every response done, and for native input drained).
 */
export async function postprocessSession(task: PostprocessTask): Promise<PostprocessSummary> {
  const s: PostprocessSummary = { events_received: 0, events_sent: 0, audio_deltas: 0, audio_bytes: 0, audio_ms: 0, responses: 0, problems: [], wav: null };
  const chunks: Buffer[] = [];
  const open = new Set<string>();
  let drained = false;
  const lines = createInterface({ input: createReadStream(task.trace_path), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const { direction, event } = JSON.parse(line) as { direction: string; event: Record<string, unknown> };
    if (direction === 'send') {
      s.events_sent++;
      continue;
    }
    s.events_received++;
    const type = String(event.type);
    if (AUDIO.has(type) && typeof event.delta === 'string') {
      const pcm = Buffer.from(event.delta, 'base64');
      chunks.push(pcm);
      s.audio_deltas++;
      s.audio_bytes += pcm.length;
    } else if (type === 'response.created') {
      open.add(String((event.response as { id?: string } | undefined)?.id));
      s.responses++;
    } else if (type === 'response.done') {
      open.delete(String((event.response as { id?: string } | undefined)?.id));
    } else if (type === 'sglang.input_audio.drained') {
      drained = true;
    }
  }
  if (open.size > 0) s.problems.push(`responses never done: ${[...open].join(', ')}`);
  if (!drained && task.protocol === 'native') s.problems.push('no sglang.input_audio.drained');
  s.audio_ms = (s.audio_bytes / (task.output_sample_rate * 2)) * 1000;
  if (chunks.length > 0) {
    await writeFile(task.wav_path, encodeWavPcm16(Buffer.concat(chunks), task.output_sample_rate));
    s.wav = task.wav_path;
  }
  if (task.burn_ms) {
    const until = performance.now() + task.burn_ms;
    while (performance.now() < until) {
      // the test hook: CPU-bound work, like validating a large trace
    }
  }
  return s;
}
