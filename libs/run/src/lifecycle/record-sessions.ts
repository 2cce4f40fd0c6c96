import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { firstValueFrom, ReplaySubject } from 'rxjs';
import { describeHost, ProcessPool, projectRevision } from '@duplex-bench/launcher';
import { EXIT, Interrupts, UsageError, type RunIo } from '@duplex-bench/cli';
import { AudioFormatError, ConversationError, type PacketSource, type Sample } from '@duplex-bench/audio';
import { encodeSamples } from '@duplex-bench/metrics';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';
import { TraceWriter } from '@duplex-bench/tracer';
import { ConversationInput } from '../conversation-input';
import { behaviourFigures, hearConversationOr } from '../conversation-behaviour';
import { connectionSettings, dialectRecord, redactArgv } from '../dialect-options';
import { sampleCameras, withVideo } from '../video-input';
import { GrantLog } from '../grant-record';
import { packetSizeOr } from '../packet-size';
import { ProcessMeasures } from '../process-measures';
import { ProcessTelemetry } from '../process-telemetry';
import { verdictOf, withVerdict, type RunVerdict } from '../verdict';
import { keepEarlierAttempt, mergeResult, readResults, sampleResult, writeResult } from '../recording/sample-results';
import { writeAttemptPacing } from '../recording/attempt-pacing';
import { Checkpoint } from '../recording/checkpoint';
import { POSTPROCESS_WORKER, postprocessRecorded, postprocessTask, recordingDataset, recordingSummary, samplePackets, type Invocation } from '../recording/recording';
import { exitOf } from './exit-status';
import { duplexMetrics, readRunRecord, writeDuplexMetrics, videoFigures, vllmOmniFigures, runFile, TRACE_LAYOUT, type ArrivalsSummary, type RunRecord, type RunSummary, writeRunFile } from '@duplex-bench/results';
import { readJsonFile, unwrittenLine, writeEvery } from '@duplex-bench/results';
import { legacyFigures } from '@duplex-bench/results';
import { RealtimeSession, reasonOf, type SessionResult } from '@duplex-bench/session';
import type { RecordOptions } from './run-settings';
import { recordArrivals } from './record-arrivals';
import { startDashboard } from './dashboard';
import type { LiveDashboard } from '@duplex-bench/telemetry';

/** Seam for tests: CPU burnt by each post-processing task. */
export interface RecordHooks {
  postprocess_burn_ms?: number;
}

/** A script or WAV file the user gave that cannot be read is bad usage, said in one line. */
async function readInput<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof AudioFormatError || err instanceof ConversationError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * A recording (`record`): every sample of the dataset (or `--per-subset` sessions of a conversation) as one
 * session, `--concurrency` at a time, each streamed at its own absolute cadence. Results go to
 * `samples/<id>.json` as each session ends; recording again into the same directory skips what is
 * done and keeps stored metrics, a conversation's behaviour events among them.
 */
/** What a recording invocation did with the dataset's samples. */
export interface RecordCounts {
  dataset: number;
  skipped: number;
  recorded: number;
  completed: number;
}

/** The human lines of a recording, the command's to render: a directory already complete, or what was recorded (its last line the verdict). */
export interface RenderRecording {
  nothingLeft(done: { dataset: number; stored: Pick<RunSummary, 'qualified' | 'behaviour'> | null; file: string }): string;
  recorded(counts: RecordCounts, summary: RunSummary, v: RunVerdict): string;
}

export async function recordSessions(given: RecordOptions, io: RunIo, render: RenderRecording, clock: Clock = monotonicClock, hooks: RecordHooks = {}): Promise<number> {
  const dataset = await readInput(() => recordingDataset(given));
  if (dataset.length === 0) throw new UsageError(`--dataset ${given.dataset}: no .wav files found`);
  await mkdir(given.output, { recursive: true });
  const stored = await readResults(given.output);
  const todo = dataset.filter((s) => !stored.get(s.id)?.completed);
  const skipped = dataset.length - todo.length;
  if (todo.length === 0) {
    // Nothing left to record: the stored recording stands, and no file of it is rewritten.
    // A summary that does not read is named (RunFileError), not taken for none.
    const summary = await readJsonFile<Pick<RunSummary, 'qualified' | 'behaviour'>>(runFile(given.output, 'summary'));
    io.emit?.(summary);
    io.stdout.write(`${render.nothingLeft({ dataset: dataset.length, stored: summary, file: runFile(given.output, 'summary') })}\n`);
    return summary && !summary.qualified && !given.allow_unqualified ? EXIT.unqualified : EXIT.ok;
  }
  const size = await packetSizeOr(given.url, given, given.connect_timeout_ms, (message) => io.stderr.write(`error: ${message}\n`), (line) => io.stderr.write(`${line}\n`));
  if (!size) return EXIT.failed;
  const opts: RecordOptions = await withVideo({ ...given, packet_ms: size.packet_ms });
  // Each sample's own camera, read before the first session so no file is read or decoded on the loop while others stream.
  const cameras = await sampleCameras(todo, opts);
  const script = opts.conversation;
  const conversation = script === undefined ? null : await readInput(() => ConversationInput.read({ ...opts, conversation: script }));
  // A conversation's model speech is found by the VAD in a thread of its own, started before anything else.
  const hearing = conversation ? await hearConversationOr(conversation, (message) => io.stderr.write(`error: ${message}\n`)) : null;
  if (conversation && !hearing) return EXIT.failed;
  // Each session's input: its own place in the conversation, or the sample's audio.
  const input = async (sample: Sample): Promise<PacketSource> => conversation?.player(() => clock.now_s()) ?? samplePackets(sample, opts.packet_ms, opts.sample_rate);

  const measures = new ProcessMeasures(opts.packet_ms, clock);
  const { samples } = measures;
  const stop$ = new ReplaySubject<void>(1);
  const writer = new TraceWriter({ root: opts.output, layout: TRACE_LAYOUT, mode: opts.trace });
  measures.timeline.watchBacklog(() => writer.backlogBytes);
  const telemetry = opts.metrics_port === undefined && !opts.otlp && !opts.dashboard ? null : new ProcessTelemetry(measures, () => writer.backlogBytes);
  let dashboard: LiveDashboard | null = null;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  const results: SessionResult[] = [];
  // Started before the first session, so its start-up never lands on a packet slot.
  const pool = opts.postprocess === 'pool' ? new ProcessPool({ module: POSTPROCESS_WORKER, size: ProcessPool.sizeFor(availableParallelism()), nice: 10 }) : null;
  const postprocessing: Array<Promise<void>> = [];
  const grants = new GrantLog(opts.output_sample_rate, opts.output_sample_rate_given, (line) => io.stderr.write(`${line}\n`));
  const ctx = measures.sessionContext({
    ...connectionSettings(opts, opts.packet_ms),
    packets: await input(dataset[0]), // each session is given its own
    onGrant: (grant) => grants.add(grant),
    stop$,
    ...hearing?.context,
    ...telemetry?.hooks(),
  });
  const started_s = clock.now_s();
  // Each invocation into this directory is kept in run.json, oldest first; the rest describes the latest.
  const earlierRun = await readRunRecord(opts.output);
  const invocation: Invocation = {
    command: ['duplex-bench', 'record', ...redactArgv(io.typed ?? io.argv)],
    started_epoch_ms: Date.now(),
    ended_epoch_ms: null,
    interrupted: null,
    to_record: todo.length,
    recorded: 0,
    completed: 0,
  };
  const runJson = {
    invocations: [...(earlierRun?.invocations ?? []), invocation],
    command: ['duplex-bench', 'record', ...redactArgv(io.typed ?? io.argv)],
    dialect: dialectRecord(opts),
    server_grant: grants.record,
    packet_ms: opts.packet_ms,
    packet_ms_source: size.source,
    dataset: conversation
      ? `conversation ${conversation.record.name}: ${opts.per_subset} x ${opts.duration_s} s`
      : (opts.dataset ?? `synthetic: 4 subsets x ${opts.per_subset}, ${opts.min_input_s}-${opts.max_input_s} s, 2 variants`),
    samples: { total: dataset.length, skipped_done: skipped, to_record: todo.length, recorded: 0, completed: 0 },
    host: await describeHost(),
    project: await projectRevision(process.cwd()),
    clock: { monotonic_s: started_s, epoch_ms: Date.now() },
    started_s,
    ended_s: null as number | null,
    load: { client_loop: { max_lag_ms: null as number | null, lags_over_80ms: 0 } },
    ...(conversation ? { conversation: conversation.record } : {}),
  } satisfies RunRecord;
  const checkpoint = new Checkpoint(runFile(opts.output, 'run'), () => {
    runJson.load.client_loop = measures.clientLoop();
    return runJson;
  });
  checkpoint.ask();

  const signals = new Interrupts(io, 'no new sessions; open ones stop sending, drain and are saved', () => stop$.next());
  try {
    for (const s of todo) {
      const earlier = stored.get(s.id);
      if (earlier) stored.set(s.id, await keepEarlierAttempt(opts.output, earlier));
    }
    const labels = { command: 'record', protocol: opts.protocol, process: '0' };
    if (telemetry && (opts.metrics_port !== undefined || opts.dashboard)) {
      try {
        if (opts.metrics_port !== undefined) await telemetry.listen(opts.metrics_port, labels, say);
        if (opts.dashboard) dashboard = await startDashboard(opts.dashboard.port, `duplex-bench record: ${opts.output}`, ['duplex-bench', 'record', ...redactArgv(io.typed ?? io.argv)], telemetry.families, clock, io);
      } catch (err) {
        io.stderr.write(`error: ${(err as Error).message}\n`);
        return EXIT.failed;
      }
    }
    if (telemetry && opts.otlp) await telemetry.pushTo(opts.otlp.endpoint, opts.otlp.interval_s, labels, say);
    await writer.started();
    const load = opts.arrivals ? `arriving at ${opts.arrivals.rate_per_s}/s (${opts.arrivals.process})` : `${opts.concurrency} at a time`;
    io.stderr.write(`recording ${todo.length} of ${dataset.length} samples (${skipped} already done), ${load}\n`);
    // What each ended session leaves: its result stored (merged with earlier attempts), its pacing, its post-processing.
    const finish = async (sample: Sample, result: SessionResult): Promise<void> => {
      results.push(result);
      const pacing_file = await writeAttemptPacing(opts.output, sample.id, samples, opts.packet_ms);
      const merged = mergeResult(stored.get(sample.id), { ...sampleResult(sample, result), ...(pacing_file ? { pacing_file } : {}) });
      stored.set(sample.id, merged);
      await writeResult(opts.output, merged);
      if (opts.postprocess !== 'off' && result.packets_sent > 0) {
        const task = postprocessTask(opts.output, sample.id, result.output_sample_rate ?? opts.output_sample_rate, opts.protocol, hooks.postprocess_burn_ms);
        const done = postprocessRecorded(opts.output, merged, task, pool);
        if (pool) postprocessing.push(done);
        else await done;
      }
      runJson.samples.recorded++;
      invocation.recorded++;
      if (result.completed) {
        runJson.samples.completed++;
        invocation.completed++;
      }
      checkpoint.ask();
    };
    let next = 0;
    // A server no session could reach before any opened ends the recording in one line, as run does.
    let openedAny = false;
    let unreachable: string | null = null;
    const lane = async (index: number) => {
      let first = true;
      while (next < todo.length && !signals.interrupted && unreachable === null) {
        const sample = todo[next++];
        const session = new RealtimeSession(sample.id, ctx, writer.openSession(sample.id), await input(sample), cameras.frames.get(sample.id));
        let result: SessionResult;
        try {
          await session.open();
          openedAny = true;
          // The first wave starts spread over one packet; later sessions start as soon as they are open.
          const start_s = clock.now_s() + (first ? 0.05 + (index * opts.packet_ms) / 1000 / opts.concurrency : 0);
          result = await session.stream(start_s);
        } catch (err) {
          const { reason, message } = reasonOf(err);
          if (!openedAny && (reason === 'connect_failed' || reason === 'connect_timeout' || reason === 'input_not_granted')) unreachable = message;
          result = await session.abandon(err);
        }
        first = false;
        await finish(sample, result);
      }
    };
    let arrivals: ArrivalsSummary | undefined;
    if (opts.arrivals) {
      arrivals = await recordArrivals({ arrivals: opts.arrivals, todo, origin_s: clock.now_s() + 0.1, measures, ctx, writer, clock, stop$, packetsOf: input, cameraOf: (sample) => cameras.frames.get(sample.id), finish });
    } else {
      await Promise.all(Array.from({ length: Math.min(opts.concurrency, todo.length) }, (_, i) => lane(i)));
    }
    if (unreachable !== null) {
      // The samples tried are stored incomplete and are recorded again next time.
      await checkpoint.final();
      io.stderr.write(`error: ${unreachable}\n`);
      return EXIT.failed;
    }
    await Promise.all(postprocessing);
    measures.stop();
    await writer.close();

    const recorded = await recordingSummary(opts.output, [...stored.values()], measures, { packet_ms: opts.packet_ms, interrupted: signals.interrupted, trace: writer.stats() });
    const { summary, sessions: all } = recorded;
    if (arrivals) summary.arrivals = arrivals;
    const duplex = duplexMetrics(all);
    if (duplex) summary.duplex = duplex.aggregate;
    if (opts.protocol === 'vllm-omni') {
      const vllm = vllmOmniFigures(all);
      if (vllm) summary.vllm_omni = vllm;
    }
    if (opts.protocol === 'sglang-legacy') {
      const legacy = legacyFigures(all);
      if (legacy) summary.legacy = legacy;
    }
    const camera = cameras.source(opts.video?.source);
    const video = camera ? videoFigures(camera, all) : null;
    if (video) summary.video = video;
    // Every stored sample's behaviour events and speech record, this invocation's and earlier ones', in sample order.
    const behaviour = conversation ? behaviourFigures(conversation, [...stored.values()].sort((a, b) => (a.sample_id < b.sample_id ? -1 : 1))) : null;
    if (behaviour) {
      summary.behaviour = behaviour.summary;
      summary.measurement_origin = { ...summary.measurement_origin, behaviour: 'record: the behaviour events of every sample stored in this directory (turns.jsonl), each from the attempt its record comes from' };
    }
    grants.addDeltaRates(results);
    runJson.ended_s = clock.now_s();
    invocation.ended_epoch_ms = Date.now();
    invocation.interrupted = signals.interrupted;
    invocation.recorded = results.length;
    invocation.completed = results.filter((r) => r.completed).length;
    const v = verdictOf({ ...summary, unit: 'session', completed: summary.sessions.completed, reasons: summary.sessions.incomplete_reasons });
    const written = withVerdict(summary, v);
    // Every file is tried whatever the others do (a full disk), each whole or not at all; one line names those not written.
    const unwritten = unwrittenLine(
      await writeEvery([
        { path: runFile(opts.output, 'summary'), write: () => writeRunFile(opts.output, 'summary', JSON.stringify(written, null, 1)) },
        { path: runFile(opts.output, 'duplex_metrics'), write: () => writeDuplexMetrics(opts.output, duplex?.file ?? { duplex_session_metrics: [] }) },
        ...(behaviour
          ? [
              { path: runFile(opts.output, 'turns'), write: () => writeRunFile(opts.output, 'turns', behaviour.turns_jsonl) },
              { path: runFile(opts.output, 'speech'), write: () => writeRunFile(opts.output, 'speech', behaviour.speech_jsonl) },
            ]
          : []),
        { path: runFile(opts.output, 'samples'), write: () => writeRunFile(opts.output, 'samples', encodeSamples(behaviour ? { ...recorded.samples, behaviour: behaviour.parts } : recorded.samples)) },
        { path: runFile(opts.output, 'timeline'), write: () => writeRunFile(opts.output, 'timeline', JSON.stringify(measures.timeline.toFile())) },
        { path: runFile(opts.output, 'run'), write: () => checkpoint.final() },
      ]),
    );
    if (unwritten) io.stderr.write(`error: ${unwritten}\n`);
    const lines = render.recorded({ dataset: dataset.length, skipped, recorded: results.length, completed: results.filter((r) => r.completed).length }, summary, v);
    io.stdout.write(`${lines}\n`);
    io.emit?.(written);
    await dashboard?.finish(lines.split('\n').at(-1) ?? '');
    const ctrlC = firstValueFrom(stop$);
    await Promise.all([telemetry?.lingerThenClose(opts.metrics_linger_s, ctrlC, say), dashboard?.lingerThenClose(opts.dashboard?.linger_s ?? 0, ctrlC, say)]);
    return unwritten ? EXIT.failed : exitOf(v, opts.allow_unqualified);
  } finally {
    await telemetry?.close();
    await dashboard?.close();
    measures.stop();
    signals.dispose();
    await writer.close();
    await pool?.close();
    await hearing?.thread.close();
  }
}
