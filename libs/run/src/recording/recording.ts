import { pcmPackets, readConversation, readWavAs, syntheticDataset, syntheticPackets, wavDataset, type PacketSource, type Sample } from '@duplex-bench/audio';
import { entryModule, type ProcessPool } from '@duplex-bench/launcher';
import { mergeSamples, type SamplesFile } from '@duplex-bench/metrics';
import type { TraceWriterStats } from '@duplex-bench/tracer';
import { RunInputError } from '../input-error';
import type { ProcessMeasures } from '../process-measures';
import type { SessionResult } from '@duplex-bench/session';
import type { RunSummary } from '@duplex-bench/results';
import { keptPacing } from './attempt-pacing';
import { postprocessSession, type PostprocessSummary, type PostprocessTask } from './postprocess';
import { writeResult, type SampleResult } from './sample-results';
import { sessionFile } from '@duplex-bench/results';

export type { Invocation } from '@duplex-bench/results';

/** The module a ProcessPool starts to post-process recorded sessions. */
export const POSTPROCESS_WORKER = entryModule(__dirname, 'postprocess-worker', 'postprocess-worker');

/** The samples to record: `per_subset` sessions of a conversation script, the WAV files of `dataset`, or the synthetic set. Throws ConversationError for a script it cannot read. */
export async function recordingDataset(o: { dataset?: string; conversation?: string; duration_s: number; sample_rate: number; per_subset: number; min_input_s: number; max_input_s: number }): Promise<Sample[]> {
  if (o.conversation !== undefined) return conversationDataset((await readConversation(o.conversation)).name, o.per_subset, o.duration_s);
  if (!o.dataset) return syntheticDataset({ per_subset: o.per_subset, min_input_s: o.min_input_s, max_input_s: o.max_input_s });
  try {
    return await wavDataset(o.dataset, o.sample_rate);
  } catch (err) {
    throw new RunInputError('BAD_DATASET', `--dataset: ${(err as Error).message}`);
  }
}

/**
 * `count` sessions of one conversation script, `duration_s` each: subset `conversation`, variant the
 * script's name. The ids depend on nothing else, so a second invocation finds the samples it
 * recorded (a name is kept to file-name characters in the id).
 */
export function conversationDataset(name: string, count: number, duration_s: number): Sample[] {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '_');
  return Array.from({ length: count }, (_, i) => ({ id: `conversation-${String(i).padStart(3, '0')}-${safe}`, subset: 'conversation', variant: name, duration_s, file: null, seed: i }));
}

/** A sample's packets: its WAV file's audio, or its synthetic signal. */
export async function samplePackets(sample: Sample, packet_ms: number, sample_rate: number): Promise<PacketSource> {
  return sample.file ? pcmPackets((await readWavAs(sample.file, sample_rate)).pcm, packet_ms, sample_rate) : syntheticPackets(sample, packet_ms, sample_rate);
}

/**
 * Post-processes a recorded session (replays its trace into output.wav) and adds the outcome to its
 * stored record. With a pool it runs in a child at low priority; without, on this loop, between
 * packets of the other sessions: kept only to show what the pool prevents.
 */
export function postprocessRecorded(dir: string, record: SampleResult, task: PostprocessTask, pool: ProcessPool | null): Promise<void> {
  return (pool ? pool.run<PostprocessSummary>(task) : postprocessSession(task)).then(
    (summary) => writeResult(dir, { ...record, postprocess: summary }),
    (err: Error) => writeResult(dir, { ...record, postprocess_error: err.message }),
  );
}

/**
 * The summary of a recording: exactly the samples stored, their records and the packets of the same
 * attempts, this invocation's and earlier ones. The process figures are this invocation's.
 */
export async function recordingSummary(
  dir: string,
  kept: SampleResult[],
  measures: ProcessMeasures,
  i: { packet_ms: number; interrupted: boolean; trace: TraceWriterStats },
): Promise<{ summary: RunSummary; sessions: SessionResult[]; samples: SamplesFile }> {
  const reported = await keptPacing(dir, kept, i.packet_ms);
  const sessions: SessionResult[] = kept.map((r) => ({ ...r, id: r.sample_id }));
  const pooled = mergeSamples([reported.file]);
  const summary = measures.summary(sessions, {
    interrupted: i.interrupted,
    trace: i.trace,
    // A recording has no warm-up flag: every packet counts. Its inputs vary in length; the longest reported stands for the duration.
    warmup_s: 0,
    duration_s: Math.max(0, ...kept.map((r) => r.duration_s)),
    pacing: {
      packets: pooled.packets,
      pacing_deviation_ms: pooled.pacing_deviation_ms,
      pacing_deviation_signed_ms: pooled.pacing_deviation_signed_ms,
      websocket_send_ms: pooled.websocket_send_ms,
      append_span_ms: pooled.append_span_ms,
      buffered_amount_peak_bytes: measures.pacing.bufferedPeak,
    },
  });
  // The CPU is this invocation's: per packet of this invocation, whatever earlier ones stored.
  const sent = measures.pacing.sent;
  summary.cpu_us_per_packet = summary.cpu_cores.cpu_s !== undefined && sent > 0 ? Math.round((summary.cpu_cores.cpu_s / sent) * 1e7) / 10 : null;
  summary.measurement_origin = {
    ...summary.measurement_origin,
    cpu_us_per_packet: "record: this invocation's CPU seconds over the packets it sent, in µs",
    scope:
      'record: sessions and pacing cover every sample stored in this directory, each from the attempt its record comes from (this invocation or an earlier one); ' +
      "event-loop lag, GC, CPU, RSS, overlapping streams, trace, scheduler and buffered_amount_peak_bytes are this invocation's (history in run.json)",
    duration_s: 'record: the longest input among the samples reported, seconds',
    ...(reported.missing > 0 ? { packets: `${reported.missing} stored sample(s) have no packet file (recorded with no packet sent, or by an older version); their packets are not in the pacing figures` } : {}),
  };
  return { summary, sessions, samples: reported.file };
}

/** Where a recorded session's post-processing reads and writes. */
export function postprocessTask(dir: string, id: string, output_sample_rate: number, protocol: PostprocessTask['protocol'], burn_ms?: number): PostprocessTask {
  return {
    trace_path: sessionFile(dir, id, 'trace'),
    wav_path: sessionFile(dir, id, 'output'),
    output_sample_rate,
    protocol,
    burn_ms,
  };
}
