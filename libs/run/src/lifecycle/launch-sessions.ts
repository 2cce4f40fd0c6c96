import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describeHost, Launcher, pinProcess, planCpus, projectRevision, readPhysicalCores, withoutFlags } from '@duplex-bench/launcher';
import { monotonicClock } from '@duplex-bench/pacer';
import { drainTimeoutMs } from '@duplex-bench/transport';
import { AudioFormatError, ConversationError } from '@duplex-bench/audio';
import { EXIT, Interrupts, UsageError, type RunIo } from '@duplex-bench/cli';
import { besideClient, poolStalls, type StallsSummary } from '@duplex-bench/telemetry';
import { duplexClientFigures, mergeChildren, mergeDuplex, readJsonFile, readSamplerFile, runFile, writeRunRecord, type MergedSummary, type RunRecord, type RunSummary } from '@duplex-bench/results';
import { ConversationInput } from '../conversation-input';
import { CHILD_KEY_ENV, redactArgv, withoutSecrets } from '../dialect-options';
import { packetSizeOr } from '../packet-size';
import { ProcessSampler } from '../process-sampler';
import { verdictOf, withVerdict, type RunVerdict } from '../verdict';
import { exitOf } from './exit-status';
import { pooledDialectBlocks } from './merge-runs';
import { exitWithSlo, judgeSlo } from '../slo-verdict';
import { serverScraper, SERVER_SCRAPE_FLAGS } from './server-scraper';
import type { RunOptions } from './run-settings';

/** The human lines of merged runs, the verdict last; `more` go before it: the command's to render. */
export type RenderMerged = (summary: MergedSummary, output: string, v: RunVerdict, more?: string[]) => string;

/** Each process's stall account, from the summary in its directory (`p<i>/`); one that does not read throws RunFileError naming it. */
export async function processStalls(dirs: string[]): Promise<Array<{ process: string; stalls: StallsSummary | undefined }>> {
  return Promise.all(dirs.map(async (dir) => ({ process: basename(dir), stalls: (await readJsonFile<RunSummary>(runFile(dir, 'summary')))?.stalls })));
}

/**
 * A run over processes (`run --processes P`): P children, each running `module`'s `run`, of `--concurrency` sessions each, through the launcher.
 * Every child handshakes, then all start at one time on the shared clock; each writes its run under
 * `p<i>/`, and the parent writes the pooled summary and run.json at the top.
 */
export async function launchSessions(opts: RunOptions, io: RunIo, render: RenderMerged, module: string): Promise<number> {
  // Children get one packet size: the parent reads the server's, when it announces one.
  const size = await packetSizeOr(opts.url, opts, opts.connect_timeout_ms, (message) => io.stderr.write(`error: ${message}\n`), (line) => io.stderr.write(`${line}\n`));
  if (!size) return EXIT.failed;
  const sizeArgs = ['--packet-ms', String(size.packet_ms)];
  // A script played once in each child's sessions lasts at most one pass: the children's time to run is counted from that.
  const session_s = opts.conversation_once ? await onceBoundS(opts, size.packet_ms) : opts.duration_s;
  const drain_s = drainTimeoutMs(opts.protocol, opts.drain_timeout_ms, session_s * 1000) / 1000;
  await mkdir(opts.output, { recursive: true });
  const cpu = planCpus(opts.cpu_affinity, opts.cpu_affinity === 'auto' && process.platform === 'linux' ? await readPhysicalCores() : null, opts.processes);
  if (opts.cpu_affinity === 'auto' && process.platform !== 'linux') cpu.warning = 'CPU placement is only done on Linux; skipped';
  if (cpu.warning) io.stderr.write(`warning: ${cpu.warning}\n`);
  if (cpu.parent) {
    const err = await pinProcess(process.pid, cpu.parent);
    if (err) io.stderr.write(`warning: could not pin the launcher to CPUs ${cpu.parent.join(',')}: ${err}\n`);
  }
  io.stderr.write(
    `launching ${opts.processes} processes x ${opts.concurrency} sessions; CPUs: launcher ${cpu.parent?.join(',') ?? 'any'}, children ${cpu.children?.map((c) => c.join(',')).join(' | ') ?? 'any'}\n`,
  );

  // --sampler: one sampler process watches every child, from their start to after their end.
  const pids: number[] = [];
  let sampler: ProcessSampler | null = null;
  const samplerArgs = opts.sampler ? ['--sampler-dir', opts.output] : [];
  const onSpawned = (index: number, pid: number) => {
    pids[index] = pid;
    if (opts.sampler && !sampler && pids.filter((p) => p > 0).length === opts.processes) {
      sampler = new ProcessSampler(pids, runFile(opts.output, 'sampler'), opts.sampler.interval_ms, opts.start_timeout_ms / 1000 + session_s + drain_s + 120);
    }
  };
  const metricsPortOf = (i: number): string[] => (opts.metrics_port === undefined ? [] : ['--metrics-port', String(opts.metrics_port === 0 ? 0 : opts.metrics_port + i)]);
  const started_s = monotonicClock.now_s();
  const launcher = new Launcher({
    module,
    count: opts.processes,
    // Each child serves its own /metrics, on the port after the previous child's (labelled process="i").
    // The children run without the terms (judged here, on the pool) and without the server's scrape (one scraper, here).
    args: (i) => ['run', ...childArgs(io.argv), ...sizeArgs, '--processes', '1', '--output', join(opts.output, `p${i}`), '--quiet', ...metricsPortOf(i), ...samplerArgs],
    env: opts.api_key ? { [CHILD_KEY_ENV]: opts.api_key } : undefined,
    start_timeout_ms: opts.start_timeout_ms,
    run_timeout_ms: (session_s + drain_s + 60 + (opts.metrics_port === undefined ? 0 : opts.metrics_linger_s)) * 1000,
    cpu,
    onSpawned,
    onStderr: (i, line) => {
      if (line.startsWith('error') || line.startsWith('warning') || line.startsWith('metrics:')) io.stderr.write(`[p${i}] ${line}\n`);
    },
  });
  const signals = new Interrupts(io, 'stopping every process; each drains and writes its summary', () => launcher.interrupt());
  // --server-metrics: one scraper for the run, in this process, from before the children start to after they end.
  const scraper = opts.server_metrics ? await serverScraper(opts.server_metrics, opts.output, (line) => io.stderr.write(`${line}\n`)) : null;
  scraper?.scraper.start();
  let result;
  let scrapeFailure: string | null = null;
  try {
    result = await launcher.run();
  } finally {
    signals.dispose();
    scrapeFailure = (await scraper?.stop()) ?? null;
  }
  if (scrapeFailure) io.stderr.write(`error: ${scrapeFailure}\n`);
  if (result.start_failure) {
    io.stderr.write(`error: process ${result.start_failure.index} ${result.start_failure.reason}\n`);
    return EXIT.failed;
  }

  await (sampler as ProcessSampler | null)?.stop();
  const dirs = result.children.map((c) => join(opts.output, `p${c.index}`));
  const { merged, died, summarised } = await mergeChildren(dirs, result.children, opts.concurrency);
  const summary = { ...merged, interrupted: merged.interrupted || signals.interrupted, layout: { processes: opts.processes, concurrency: opts.concurrency } };
  const duplex = await mergeDuplex(summarised, opts.output);
  if (duplex) summary.duplex = duplex;
  // The dialect's own blocks (vLLM-Omni, legacy, camera frames), pooled as merge pools them.
  Object.assign(summary, await pooledDialectBlocks(summarised));
  if (scraper) summary.server_metrics = besideClient(scraper.scraper.summary(), duplexClientFigures(summary.duplex));
  if (opts.sampler) {
    const parts = await processStalls(summarised);
    const pooled = poolStalls(parts, (await readSamplerFile(opts.output, 0).catch(() => null))?.footer ?? null);
    if (pooled) summary.stalls = pooled;
  }
  if (died.length > 0) summary.qualified = false;
  const runJson = {
    command: ['duplex-bench', 'run', ...redactArgv(io.typed ?? io.argv)],
    protocol: opts.protocol,
    layout: {
      processes: opts.processes,
      concurrency_per_process: opts.concurrency,
      packet_ms: size.packet_ms,
      packet_ms_source: size.source,
      ...(opts.conversation_once ? { duration_s: null, conversation_once: { bound_s: session_s } } : { duration_s: opts.duration_s }),
    },
    cpu_plan: cpu,
    host: await describeHost(),
    project: await projectRevision(process.cwd()),
    started_s,
    gate_s: result.gate_s,
    ended_s: monotonicClock.now_s(),
    children: result.children,
  } satisfies RunRecord;
  // A process that died, or server_metrics.jsonl not written, fails the run (as a file a single process could not write does).
  const failures = [...died.map((c) => `process ${c.index} ${c.failure ?? 'left no summary'}`), ...(scrapeFailure ? [scrapeFailure] : [])];
  const failure = failures.length > 0 ? failures.join('; ') : null;
  const v = verdictOf({ ...summary, unit: 'session', completed: summary.sessions.completed, reasons: summary.sessions.incomplete_reasons, failure });
  // --slo: judged here, on the pooled summary (the children run without it).
  // The pooled summary holds every figure a term reads (duplex, sessions, units, behaviour), under the run's names.
  const slo = opts.slo ? judgeSlo(opts.slo, summary as unknown as RunSummary) : null;
  if (slo) summary.slo = slo.block;
  const written = withVerdict(summary, v);
  await writeFile(runFile(opts.output, 'summary'), JSON.stringify(written, null, 1));
  await writeRunRecord(opts.output, runJson);
  // Error lines first: the verdict is the last human line.
  for (const c of died) io.stderr.write(`error: process ${c.index} ${c.failure ?? 'left no summary'}\n`);
  const code = exitWithSlo(exitOf(v, opts.allow_unqualified), slo);
  // The SLO's line goes last when it decides the status, else just before the verdict.
  const lines = render(summary, opts.output, v).split('\n');
  if (slo) lines.splice(code === EXIT.slo_failed ? lines.length : lines.length - 1, 0, slo.line);
  io.stdout.write(`${lines.join('\n')}\n`);
  io.emit?.(written);
  return code;
}

/** A child's arguments: the parent's, without the SLO terms and the server's scrape (the parent does both, once). */
function childArgs(argv: string[]): string[] {
  return withoutFlags(withoutSecrets(argv), ['slo', ...SERVER_SCRAPE_FLAGS]);
}

/** The longest one pass of the run's conversation can take, s, at the children's packet size. Throws UsageError for a script or WAV it cannot read. */
async function onceBoundS(opts: RunOptions, packet_ms: number): Promise<number> {
  try {
    return (await ConversationInput.read({ ...opts, conversation: opts.conversation as string, packet_ms })).passBoundS();
  } catch (err) {
    if (err instanceof AudioFormatError || err instanceof ConversationError) throw new UsageError(err.message);
    throw err;
  }
}
