import { mkdir, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { firstValueFrom, ReplaySubject } from 'rxjs';
import { AudioFormatError, ConversationError, type PacketSource } from '@duplex-bench/audio';
import { EXIT, Interrupts, UsageError, type RunIo } from '@duplex-bench/cli';
import { CHILD_ENV, describeHost, projectRevision } from '@duplex-bench/launcher';
import { encodeSamples } from '@duplex-bench/metrics';
import { monotonicClock, scheduleStall, spreadStarts, timersOn, type Clock } from '@duplex-bench/pacer';
import { besideClient, ServerScrapers, type LiveDashboard } from '@duplex-bench/telemetry';
import { ConversationInput } from '../conversation-input';
import { behaviourFigures, hearConversationOr } from '../conversation-behaviour';
import { connectionSettings, dialectRecord, redactArgv } from '../dialect-options';
import { GrantLog } from '../grant-record';
import { withVideo } from '../video-input';
import { arrivalPackets, openFirstThenAll, removeTrace, runPackets, type AudioInputRecord } from '../open-sessions';
import { sessionLines, type EndedSessions } from '../ended-sessions';
import { packetSizeOr } from '../packet-size';
import { ProcessMeasures } from '../process-measures';
import { ProcessTelemetry } from '../process-telemetry';
import { ProcessSampler } from '../process-sampler';
import { prepareStall } from '../inject-stall';
import { startAtGate } from '../shard';
import { estimateClockOffset, type ClockOffset } from '../clock-offset';
import { describeDuration, meanDurationS } from '../arrivals/session-duration';
import { verdictOf, withVerdict, type RunVerdict } from '../verdict';
import { exitOf } from './exit-status';
import { exitWithSlo, judgeSlo } from '../slo-verdict';
import { abortLine, eachHook, SloWatch } from '../slo-watch';
import { duplexClientFigures, duplexMetrics, videoFigures, vllmOmniFigures, runFile, sessionFile, RUN_FILES, TRACE_LAYOUT, type ArrivalsSummary, type RunRecord, type RunSummary, writeDuplexMetrics, writeRunRecord, writeRunFile } from '@duplex-bench/results';
import { appendRunFile, unwrittenLine, writeEvery } from '@duplex-bench/results';
import { legacyFigures, withConversationOnce } from '@duplex-bench/results';
import { RealtimeSession, SendBarrier, type SessionResult } from '@duplex-bench/session';
import { drainTimeoutMs } from '@duplex-bench/transport';
import { TraceWriter, type TraceWriterOptions } from '@duplex-bench/tracer';
import { Progress } from './progress';
import { runArrivals } from './arrival-sessions';
import { startDashboard } from './dashboard';
import type { RunOptions } from './run-settings';

/** Gate margin: time between the start decision and the first packet, so no session starts late. */
const GATE_MARGIN_S = 0.1;

/** Seams for tests: writer settings (a slow worker) and a look at the writer once streaming starts. */
export interface RunHooks {
  writer?: Partial<Pick<TraceWriterOptions, 'delay_ms_per_batch' | 'flush_interval_ms'>>;
  onStreaming?(writer: TraceWriter): void;
  /** In a launched child: reports readiness and returns the launcher's common start time. */
  startGate?(opened: number, failed: number): Promise<number>;
  /** In a launched child: reports a failure before the gate. */
  failedBeforeGate?(message: string): void;
}

/** The human summary of a run, its last line the verdict: the command's to render. */
export type RenderRun = (summary: RunSummary, output: string, v: RunVerdict) => string;

/** A run of sessions (`run`): streams the packets on every session, then writes the run's files and prints the summary `render` makes. Returns the exit status. */
export async function runSessions(given: RunOptions, io: RunIo, render: RenderRun, clock: Clock = monotonicClock, hooks: RunHooks = {}): Promise<number> {
  const size = await packetSizeOr(
    given.url,
    given,
    given.connect_timeout_ms,
    (message) => {
      io.stderr.write(`error: ${message}\n`);
      hooks.failedBeforeGate?.(message);
    },
    (line) => io.stderr.write(`${line}\n`),
  );
  if (!size) return EXIT.failed;
  const opts: RunOptions = await withVideo({ ...given, packet_ms: size.packet_ms });
  if (size.source === 'session.created.capabilities.chunk_period_ms') {
    io.stderr.write(`packets: ${size.packet_ms} ms, the server's chunk_period_ms (give --packet-ms to choose)\n`);
  }
  let packets: PacketSource;
  let audio: AudioInputRecord | null;
  let conversation: ConversationInput | null = null;
  // An arriving session streams its own duration: its packets are made when it arrives.
  let packetsFor: ((duration_s: number) => PacketSource) | null = null;
  try {
    ({ packets, audio } = await runPackets(opts));
    if (opts.arrivals) ({ packetsFor, audio } = await arrivalPackets(opts));
    if (opts.conversation !== undefined) conversation = await ConversationInput.read({ ...opts, conversation: opts.conversation, packet_ms: opts.packet_ms });
    // A session as long as its conversation is given the longest one pass can take, and ends where its script does.
    if (conversation && opts.arrivals?.duration.kind === 'conversation') opts.arrivals = { ...opts.arrivals, duration: { kind: 'conversation', bound_s: conversation.passBoundS() } };
    // Without --duration, each session plays the script once: the run lasts as long as one pass can.
    if (conversation && opts.conversation_once) opts.duration_s = conversation.sessionBoundS();
  } catch (err) {
    if (err instanceof AudioFormatError || err instanceof ConversationError) throw new UsageError(err.message);
    throw new UsageError(`--audio: ${(err as Error).message}`);
  }
  try {
    await mkdir(opts.output, { recursive: true });
  } catch (err) {
    io.stderr.write(`error: cannot create output directory ${opts.output}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }

  // A conversation's model speech is found by the VAD in a thread of its own, started before anything else.
  const hearing = conversation ? await hearConversationOr(conversation, (message) => io.stderr.write(`error: ${message}\n`)) : null;
  if (conversation && !hearing) return EXIT.failed;

  const epoch_ms = Date.now(); // only to map the monotonic clock to wall time in run.json
  const started_s = clock.now_s();
  const measures = new ProcessMeasures(opts.packet_ms, clock);
  const { loop, scheduler, overlap, pacing, samples } = measures;
  const stop$ = new ReplaySubject<void>(1);
  // The exposition reads the writer's backlog, and the writer starts after the sessions' context.
  let backlogBytes = (): number => 0;
  const telemetry = opts.metrics_port === undefined && !opts.otlp && !opts.dashboard ? null : new ProcessTelemetry(measures, () => backlogBytes());
  let dashboard: LiveDashboard | null = null;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  // --abort-on-fail: a term that can no longer pass ends the run as an interrupt does, and exits 4.
  const watch =
    opts.slo && opts.abort_on_fail
      ? new SloWatch({
          terms: opts.slo,
          grace_s: opts.abort_on_fail.grace_s,
          clock,
          arrivals: opts.arrivals !== undefined,
          onAbort: (a) => {
            say(`SLO FAILED, ending the run early: ${abortLine(a)}; stopping sends, draining sessions, writing the summary`);
            stop$.next();
          },
        })
      : null;
  const grants = new GrantLog(opts.output_sample_rate, opts.output_sample_rate_given, (line) => io.stderr.write(`${line}\n`));
  const ctx = measures.sessionContext({
    ...connectionSettings(opts, opts.packet_ms),
    packets,
    onGrant: (grant) => grants.add(grant),
    stop$,
    // Arriving sessions, and sessions that each play a script once, end on their own: no input end waits for the others'.
    ...(opts.arrivals || opts.conversation_once ? {} : { allSent: new SendBarrier() }),
    ...hearing?.context,
    ...eachHook(telemetry?.hooks(), watch?.hooks()),
  });
  const runJson = {
    command: ['duplex-bench', 'run', ...redactArgv(io.typed ?? io.argv)],
    protocol: opts.protocol,
    dialect: dialectRecord(opts),
    server_grant: grants.record,
    layout: {
      processes: 1,
      concurrency: opts.concurrency,
      ...(opts.arrivals
        ? {
            arrivals: {
              process: opts.arrivals.process,
              rate_per_s: opts.arrivals.rate_per_s,
              session_duration: describeDuration(opts.arrivals.duration),
              run_for_s: opts.arrivals.run_for_s,
              max_in_flight: opts.arrivals.max_in_flight,
              seed: opts.arrivals.seed,
              admission_retries: opts.admission.retries,
            },
          }
        : {}),
      packet_ms: opts.packet_ms,
      packet_ms_source: size.source,
      // A script played once has no duration set: each session's bound, and the summary its longest input.
      ...(opts.conversation_once ? { duration_s: null, conversation_once: { bound_s: opts.duration_s } } : { duration_s: opts.duration_s }),
      trace: opts.trace,
      ...(opts.shard ? { shard: `${opts.shard.index}/${opts.shard.count}`, first_session: opts.first_session, sessions_total: opts.sessions_total } : {}),
      ...(opts.start_at_ms !== undefined ? { start_at_epoch_ms: opts.start_at_ms } : {}),
    },
    host: await describeHost(),
    project: await projectRevision(process.cwd()),
    clock: { monotonic_s: started_s, epoch_ms, source: 'process.hrtime.bigint (CLOCK_MONOTONIC)' },
    started_s,
    ended_s: null as number | null,
    gate_s: null as number | null,
    /** With --start-at: the (monotonic, this host's wall) pair the gate was mapped from. */
    gate_clock: null as { monotonic_s: number; epoch_ms: number } | null,
    /** This host's offset to the reference clock (--time-url), measured before the start. */
    clock_offset: null as ClockOffset | null,
    load: { client_loop: { max_lag_ms: null as number | null, lags_over_80ms: 0 } },
    ...(audio ? { input_audio: audio } : {}),
    ...(conversation ? { conversation: conversation.record } : {}),
  } satisfies RunRecord;
  const checkpoint = writeRunRecord(opts.output, runJson).catch(() => undefined);

  const signals = new Interrupts(io, 'stopping sends, draining sessions, writing the summary', () => stop$.next());

  const writer = new TraceWriter({ root: opts.output, layout: TRACE_LAYOUT, mode: opts.trace, ...hooks.writer });
  backlogBytes = () => writer.backlogBytes;
  measures.timeline.watchBacklog(backlogBytes);
  const width = String(opts.sessions_total - 1).length;
  const sessions = Array.from({ length: opts.concurrency }, (_, i) => {
    const id = `s${String(opts.first_session + i).padStart(width, '0')}`;
    return new RealtimeSession(id, ctx, writer.openSession(id), conversation?.player(() => clock.now_s()));
  });

  const progress = new Progress(io.stderr, opts.quiet, clock);
  let sampler: ProcessSampler | null = null;
  const hold = opts.inject_stall_ms > 0 ? prepareStall(opts.inject_stall_kind, clock, opts.output) : undefined;
  const scraper = opts.server_metrics
    ? new ServerScrapers(opts.server_metrics.urls, {
        interval_s: opts.server_metrics.interval_s,
        extra_histograms: opts.server_metrics.histograms,
        gauges: opts.server_metrics.gauges,
        timers: timersOn(clock),
        onRow: (line) => writer.append(RUN_FILES.server_metrics, line),
        say,
      })
    : null;
  try {
    try {
      const labels = { command: 'run', protocol: opts.protocol, process: process.env[CHILD_ENV] ?? '0' };
      if (telemetry && opts.metrics_port !== undefined) await telemetry.listen(opts.metrics_port, labels, say);
      if (telemetry && opts.otlp) await telemetry.pushTo(opts.otlp.endpoint, opts.otlp.interval_s, labels, say);
      if (telemetry && opts.dashboard) dashboard = await startDashboard(opts.dashboard.port, `duplex-bench run: ${opts.output}`, runJson.command, telemetry.families, clock, io);
      await writer.started();
    } catch (err) {
      io.stderr.write(`error: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
    // The first scrape, before any session, is the baseline the run's server figures are deltas from.
    scraper?.start();
    // The sampler looks from before the first session to after the last.
    const startWait_s = opts.start_at_ms === undefined ? 0 : Math.max(0, (opts.start_at_ms - Date.now()) / 1000);
    const session_s = opts.arrivals ? opts.arrivals.run_for_s : opts.duration_s;
    const bound_s = startWait_s + session_s + drainTimeoutMs(opts.protocol, opts.drain_timeout_ms, session_s * 1000) / 1000 + opts.connect_timeout_ms / 1000 + 600;
    // Under a launcher, its one sampler watches every process: this one only reads its looks.
    sampler = opts.sampler && !opts.sampler.shared_dir ? new ProcessSampler([process.pid], runFile(opts.output, 'sampler'), opts.sampler.interval_ms, bound_s) : null;
    let results: SessionResult[];
    let arrivals: ArrivalsSummary | undefined;
    // An arrival run wrote each session's rows as it ended; a run of sessions started together writes them now.
    let ended: EndedSessions | null = null;
    if (opts.arrivals && packetsFor) {
      const origin_s = clock.now_s() + GATE_MARGIN_S;
      runJson.gate_s = origin_s;
      measures.steadyFrom(origin_s + opts.warmup_s);
      watch?.start(origin_s, origin_s + opts.warmup_s);
      measures.loadUntil(origin_s + opts.arrivals.run_for_s);
      if (opts.inject_stall_ms > 0) scheduleStall(scheduler, clock, origin_s, opts.arrivals.run_for_s / 2, opts.packet_ms, opts.inject_stall_ms, hold);
      const a = opts.arrivals;
      // Sessions come and go for as long as the run lasts: each one's packets go to samples.msgpack a part at a time and as it ends.
      samples.spillTo((bytes) => writer.append(RUN_FILES.samples, bytes));
      await writeRunFile(opts.output, 'sessions', '');
      const mean_s = meanDurationS(a.duration);
      const offered = mean_s === null ? `one pass of the script each (at most ${a.duration.kind === 'conversation' ? a.duration.bound_s : '-'} s): Erlangs offered from their measured mean at the end` : `${describeDuration(a.duration)} s: ${(a.rate_per_s * mean_s).toFixed(2)} Erlangs offered`;
      io.stderr.write(`arriving: ${a.process} at ${a.rate_per_s}/s for ${a.run_for_s} s, sessions ${offered}\n`);
      hooks.onStreaming?.(writer);
      progress.start(() => ({ active: overlap.active, sent: pacing.sent, late: pacing.late, loop_max_ms: loop.figures().max, rss: measures.rss.figures() }));
      const ran = await runArrivals({ arrivals: a, origin_s, warmup_s: opts.warmup_s, measures, ctx, writer, clock, stop$, packetsFor, conversation, packet_ms: opts.packet_ms });
      results = ran.results;
      ended = ran.ended;
      arrivals = ran.summary;
    } else {
      // An unreachable server fails the run in one line, before the other sessions try.
      const { opened, failed, unreachable } = await openFirstThenAll(sessions, opts.open_parallel, () => signals.interrupted);
      if (unreachable) {
        io.stderr.write(`error: ${unreachable}\n`);
        hooks.failedBeforeGate?.(unreachable);
        return EXIT.failed;
      }

      ctx.allSent?.expect(opened.length);
      // A session's packets go to samples.msgpack a part at a time as it streams (a run of hours holds one part of each).
      samples.spillTo((bytes) => writer.append(RUN_FILES.samples, bytes));
      // A launched child takes the launcher's start time, unless it is interrupted while waiting for it.
      // This host's wall clock (a test may set it off), and its offset to the reference when there is one.
      const wall = () => performance.timeOrigin + performance.now() + opts.clock_offset_ms;
      if (opts.time_url) {
        runJson.clock_offset = await estimateClockOffset(opts.time_url, wall).catch((err: Error) => {
          io.stderr.write(`warning: no clock offset from ${opts.time_url}: ${err.message}; the start and the merge use this host's clock as it is\n`);
          return null;
        });
      }
      // The reference instant is this host's wall instant start_at − offset.
      const at = opts.start_at_ms === undefined ? null : startAtGate(opts.start_at_ms - (runJson.clock_offset?.offset_ms ?? 0), clock, wall);
      if (at && at.late_ms > 0) {
        io.stderr.write(`error: ready ${Math.round(at.late_ms)} ms after --start-at ${opts.start_at_ms}: not starting late\n`);
        await Promise.all(opened.map((s) => s.abandon(new Error('ready after --start-at'))));
        return EXIT.failed;
      }
      const gate_s = hooks.startGate
        ? await Promise.race([hooks.startGate(opened.length, failed.length), firstValueFrom(stop$).then(() => clock.now_s())])
        : (at?.gate_s ?? clock.now_s() + GATE_MARGIN_S);
      runJson.gate_s = gate_s;
      runJson.gate_clock = at?.pair ?? null;
      measures.steadyFrom(gate_s + opts.warmup_s);
      watch?.start(gate_s, gate_s + opts.warmup_s);
      measures.loadUntil(gate_s + opts.duration_s);
      const starts = spreadStarts(gate_s, opened.length, opts.start_spread_ms);
      if (opts.inject_stall_ms > 0) scheduleStall(scheduler, clock, gate_s, opts.duration_s / 2, opts.packet_ms, opts.inject_stall_ms, hold);
      const once = opts.conversation_once && conversation ? `, each playing the ${conversation.record.name} script once (at most ${opts.duration_s.toFixed(2)} s)` : '';
      io.stderr.write(`streaming: ${opened.length} of ${sessions.length} sessions passed the start gate${once}\n`);
      hooks.onStreaming?.(writer);
      progress.start(() => ({ active: overlap.active, sent: pacing.sent, late: pacing.late, loop_max_ms: loop.figures().max, rss: measures.rss.figures() }));
      results = await Promise.all([...opened.map((s, i) => s.stream(starts[i])), ...failed]);
    }
    progress.stop();
    watch?.stop();
    // One last scrape at the run's end closes the server's window; its rows go through the writer.
    await scraper?.stop();
    measures.stop();
    const samplerExit = await sampler?.stop();
    sampler = null;
    await writer.close();

    const summary = measures.summary(results, {
      // A run its SLO ended early stopped as an interrupt stops it: the summary's slo block says why.
      interrupted: signals.interrupted || watch?.abort != null,
      trace: writer.stats(),
      warmup_s: opts.warmup_s,
      duration_s: opts.duration_s,
      pacing_mode: opts.pacing ?? 'realtime',
    });
    if (arrivals) summary.arrivals = arrivals;
    if (opts.conversation_once) withConversationOnce(summary, results, opts.packet_ms, opts.duration_s);
    runJson.ended_s = clock.now_s();
    runJson.load.client_loop = measures.clientLoop();
    await checkpoint;
    const duplex = duplexMetrics(results);
    if (duplex) summary.duplex = duplex.aggregate;
    if (opts.protocol === 'vllm-omni') {
      const vllm = vllmOmniFigures(results);
      if (vllm) summary.vllm_omni = vllm;
    }
    if (opts.protocol === 'sglang-legacy') {
      const legacy = legacyFigures(results);
      if (legacy) summary.legacy = legacy;
    }
    const video = opts.video ? videoFigures(opts.video.source, results) : null;
    if (video) summary.video = video;
    const behaviour = conversation ? behaviourFigures(conversation, results) : null;
    if (behaviour) summary.behaviour = behaviour.summary;
    if (behaviour) telemetry?.behaviour(behaviour.parts);
    if (scraper) summary.server_metrics = besideClient(scraper.summary(), duplexClientFigures(summary.duplex));
    if (opts.sampler) {
      if (samplerExit && samplerExit.code !== 0) io.stderr.write(`warning: the sampler ended with ${samplerExit.code ?? 'a signal'}${samplerExit.error ? ` (${samplerExit.error})` : ''}; stalls it did not see are unsampled\n`);
      const shared = opts.sampler.shared_dir;
      summary.stalls = await ProcessSampler.stalls(shared ?? opts.output, measures, runJson.gate_s ?? started_s, shared !== undefined).catch((err: Error) => {
        io.stderr.write(`warning: the sampler's file could not be read (${err.message}); no stall is attributed\n`);
        return undefined;
      });
    }
    grants.addDeltaRates(results);
    // The timeline marks each stall on the monotonic clock, as its bins are.
    const gate_s = runJson.gate_s ?? started_s;
    const stallMarks = summary.stalls?.list.map((st) => ({ start_s: Math.round((gate_s + st.t_s) * 1e6) / 1e6, ms: Math.round(st.ms * 1000) / 1000, cause: st.cause }));
    // A session whose trace could not be written has a trace cut short (a full disk): it goes first,
    // so the run's own files may still fit.
    const cut = opts.trace === 'off' ? [] : results.filter((r) => r.reason === 'trace_write_failed');
    if (cut.length > 0) {
      await Promise.all(cut.map((r) => removeTrace(sessionFile(opts.output, r.id, 'trace'), (line) => io.stderr.write(`${line}\n`))));
      io.stderr.write(`removed the traces of ${cut.length} session(s) cut short by a failed write, to make room for the run's files\n`);
    }
    // Every file but the summary, each whole or not at all, each tried whatever the others do (a
    // full disk); the summary last, with the verdict that knows what could not be written.
    const samplesBytes = () => encodeSamples(samples.toFile(pacing, measures.units.unit_ms > 0 ? measures.units.lag : undefined, behaviour?.parts, measures.receiveDelay));
    const files = await writeEvery([
      ...(duplex ? [{ path: runFile(opts.output, 'duplex_metrics'), write: () => (ended ? ended.duplex.close(opts.output, duplex.aggregate) : writeDuplexMetrics(opts.output, duplex.file)) }] : []),
      ...(behaviour
        ? [
            { path: runFile(opts.output, 'turns'), write: () => writeRunFile(opts.output, 'turns', behaviour.turns_jsonl) },
            { path: runFile(opts.output, 'speech'), write: () => writeRunFile(opts.output, 'speech', behaviour.speech_jsonl) },
          ]
        : []),
      { path: runFile(opts.output, 'run'), write: () => writeRunRecord(opts.output, runJson) },
      // After the sessions' parts spilled as they went (the writer is closed: they are on disk), the value with the histograms.
      { path: runFile(opts.output, 'samples'), write: () => (samples.spilled > 0 ? appendRunFile(opts.output, 'samples', samplesBytes()) : writeRunFile(opts.output, 'samples', samplesBytes())) },
      { path: runFile(opts.output, 'timeline'), write: () => writeRunFile(opts.output, 'timeline', JSON.stringify({ ...measures.timeline.toFile(), ...(stallMarks ? { stalls: stallMarks } : {}) })) },
      ...(ended ? [] : [{ path: runFile(opts.output, 'sessions'), write: () => writeRunFile(opts.output, 'sessions', sessionLines(results)) }]),
    ].filter((w) => !writer.lost(basename(w.path))));
    // A run whose server refused what this client sent broke the dialect's contract, whatever its pacing.
    const refused = results.filter((r) => r.reason === 'client_protocol_error');
    // Samples the writer could not append are cut short, and unreadable: removed. Lines already appended stay.
    const samplesCut = writer.lost(RUN_FILES.samples);
    if (samplesCut) await rm(runFile(opts.output, 'samples'), { force: true });
    const lostRecords = writer.recordFailure ? `${writer.recordFailure.message}; ${samplesCut ? `${RUN_FILES.samples} removed, as it was cut short` : 'that file is cut short'}` : null;
    const unwritten = [lostRecords, unwrittenLine(files)].filter((l): l is string => l !== null).join('; ');
    const failure = writer.failure
      ? `${writer.failure.message}; the sessions it held are incomplete`
      : unwritten
        ? unwritten
        : refused.length > 0
          ? `the server refused what the client sent in ${refused.length} session(s) (${refused[0].server_error?.code ?? refused[0].message}): client_protocol_error`
          : null;
    const v = verdictOf({ ...summary, unit: 'session', completed: summary.sessions.completed, reasons: summary.sessions.incomplete_reasons, failure });
    const slo = opts.slo ? judgeSlo(opts.slo, summary, watch?.abort ?? null) : null;
    if (slo) summary.slo = slo.block;
    const written = withVerdict(summary, v);
    const summaryFile = await writeEvery([{ path: runFile(opts.output, 'summary'), write: () => writeRunFile(opts.output, 'summary', JSON.stringify(written, null, 1)) }]);
    const summaryLost = unwrittenLine(summaryFile, files.written);
    if (opts.trace !== 'off' && !opts.keep_traces) {
      // An incomplete session's trace stays: it holds what ended the session.
      await Promise.all(results.filter((r) => r.completed).map((r) => removeTrace(sessionFile(opts.output, r.id, 'trace'), (line) => io.stderr.write(`${line}\n`))));
    }
    // Error lines first: the verdict is the last human line, on stdout or (with --json) on stderr.
    if (failure) io.stderr.write(`error: ${failure}\n`);
    if (summaryLost) io.stderr.write(`error: ${summaryLost}\n`);
    else if (!failure && v.verdict === 'failed') io.stderr.write(`error: no session completed (${Object.keys(summary.sessions.incomplete_reasons).join(', ')})\n`);
    // A lockstep run kept no schedule on purpose: its verdict is "not applicable", not a failed cadence.
    const own = summaryLost ? EXIT.failed : summary.pacing === 'lockstep' && v.verdict === 'unqualified' ? EXIT.ok : exitOf(v, opts.allow_unqualified);
    const code = exitWithSlo(own, slo, signals.interrupted);
    // The SLO's line goes last when it decides the status, else just before the verdict.
    const lines = render(summary, opts.output, v).split('\n');
    if (slo) lines.splice(code === EXIT.slo_failed ? lines.length : lines.length - 1, 0, slo.line);
    io.stdout.write(`${lines.join('\n')}\n`);
    io.emit?.(written);
    await dashboard?.finish(lines[lines.length - 1]);
    // The last scrapes see the counts the summary reports; the dashboard shows them with the verdict.
    const ctrlC = firstValueFrom(stop$);
    await Promise.all([telemetry?.lingerThenClose(opts.metrics_linger_s, ctrlC, say), dashboard?.lingerThenClose(opts.dashboard?.linger_s ?? 0, ctrlC, say)]);
    return code;
  } finally {
    await sampler?.stop();
    await scraper?.stop();
    await telemetry?.close();
    await dashboard?.close();
    progress.stop();
    watch?.stop();
    measures.stop();
    signals.dispose();
    await writer.close();
    await hearing?.thread.close();
  }
}
