import { readFile, writeFile } from 'node:fs/promises';
import { encodeWavPcm16 } from '@duplex-bench/audio';
import { checkLegacyTrace, checkNativeTrace, grantedProfile, parseTraceLines } from '@duplex-bench/conformance';
import { vllmResponseId } from '@duplex-bench/protocol';

export interface PostprocessTask {
  trace_path: string;
  wav_path: string;
  output_sample_rate: number;
  /** Native traces are graded against the native contract; openai ones for responses left open. */
  protocol: 'native' | 'openai' | 'vllm-omni' | 'sglang-legacy';
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

interface TraceRecord {
  direction: string;
  event: Record<string, unknown>;
}

/**
 * Replays one finished session's trace: rebuilds its output audio as a WAV and checks what the
 * dialect promises. A native trace is held to the whole native contract (`checkNativeTrace`, by
 * the profile its grant states); an openai one to every response done.
 */
export async function postprocessSession(task: PostprocessTask): Promise<PostprocessSummary> {
  const s: PostprocessSummary = { events_received: 0, events_sent: 0, audio_deltas: 0, audio_bytes: 0, audio_ms: 0, responses: 0, problems: [], wav: null };
  const chunks: Buffer[] = [];
  const open = new Set<string>();
  // A delta that states its own rate (vLLM-Omni) is timed, and written, at that rate.
  let stated_rate: number | null = null;
  const { records, errors } = parseTraceLines(await readFile(task.trace_path, 'utf8'));
  for (const record of records as TraceRecord[]) {
    const { direction, event } = record;
    if (direction === 'send') s.events_sent++;
    if (direction !== 'receive') continue;
    s.events_received++;
    const type = String(event.type);
    if (AUDIO.has(type) && typeof event.delta === 'string') {
      const pcm = Buffer.from(event.delta, 'base64');
      chunks.push(pcm);
      s.audio_deltas++;
      s.audio_bytes += pcm.length;
      const rate = typeof event.sample_rate_hz === 'number' && event.sample_rate_hz > 0 ? event.sample_rate_hz : task.output_sample_rate;
      stated_rate ??= rate;
      s.audio_ms += (pcm.length / (rate * 2)) * 1000;
    } else if (type === 'response.created') {
      open.add(vllmResponseId(event));
      s.responses++;
    } else if (type === 'response.done') {
      open.delete(vllmResponseId(event));
    }
  }
  if (task.protocol === 'native') {
    const profile = grantedProfile(records);
    if (!profile) s.problems.push('contract: the grant states no known profile (native_unit_ms and output rate)');
    else s.problems.push(...checkNativeTrace(records, profile, { line_errors: errors }).violations.map((v) => `contract (${profile.name}): ${v}`));
  } else if (task.protocol === 'sglang-legacy') {
    // Responses open at the close are no fault of this protocol: its oracle grades the trace.
    s.problems.push(...checkLegacyTrace(records, { line_errors: errors }).violations.map((v) => `contract (qwen3-omni-half-duplex): ${v}`));
  } else {
    s.problems.push(...errors);
    if (open.size > 0) s.problems.push(`responses never done: ${[...open].join(', ')}`);
  }
  if (chunks.length > 0) {
    await writeFile(task.wav_path, encodeWavPcm16(Buffer.concat(chunks), stated_rate ?? task.output_sample_rate));
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
