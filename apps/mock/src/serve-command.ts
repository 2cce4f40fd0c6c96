import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EXIT, UsageError, type RunIo } from '@duplex-bench/cli';
import { startHttpStub, startMockServer, startTimeServer } from '@duplex-bench/mock-servers';
import { exposeMetrics, mockFamilies, type MetricsEndpoint } from '@duplex-bench/telemetry';
import { watchParent } from './parent-watch';
import { parseServeOptions, type ServeOptions } from './serve-options';

/** `serve`: a mock server until SIGINT or SIGTERM (or its parent ends); then it writes its stats and exits 0. */
export async function serveCommand(argv: string[], io: RunIo): Promise<number> {
  const options = parseServeOptions(argv);
  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (options.tls) {
    try {
      tls = { cert: await readFile(options.tls.cert), key: await readFile(options.tls.key) };
    } catch (err) {
      throw new UsageError(`--tls-cert/--tls-key: ${(err as Error).message}`);
    }
  }
  if (options.protocol === 'http' && options.http) return serveHttp(options.http, options, io);
  if (options.protocol === 'http') throw new UsageError('--protocol http needs its stub settings');
  if (options.protocol === 'time') return serveTime(options, io);
  let server;
  try {
    server = await startMockServer({
      protocol: options.protocol,
      openai: options.openai,
      unit_ms: options.unit_ms,
      tls,
      host: options.host,
      port: options.port,
      replies_per_append: options.replies_per_append,
      output_sample_rate: options.output_sample_rate,
      max_sessions: options.max_sessions,
      capacity_sessions: options.capacity_sessions,
      ...(options.stamp_sends ? { stamp_sends: true } : {}),
      profile: options.profile,
      model: options.model,
      behaviour: options.behaviour,
      leading_silence_ms: options.leading_silence_ms,
      images: options.images,
    }, options.fault);
  } catch (err) {
    // A script that cannot be read is the user's to fix: a usage error, as a bad flag is.
    if ((err as { name?: string }).name === 'ConversationError') throw new UsageError((err as Error).message);
    io.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`listening on ${server.url}\n`);
  let endpoint: MetricsEndpoint | null;
  try {
    const live = server;
    endpoint = await exposeMetrics({
      port: options.metrics_port,
      labels: { command: 'serve', protocol: options.protocol, process: '0' },
      families: mockFamilies({ counts: () => live.counts() }, options.gpu),
      say: (line) => io.stderr.write(`${line}\n`),
    });
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    await server.close();
    return EXIT.failed;
  }
  const signal = await untilSignal(io, options);
  const stats = server.stats();
  await endpoint?.close();
  await server.close();
  if (!(await writeStats(options.stats_output, stats, io))) return EXIT.failed;
  const a = stats.arrival_deviation_ms;
  io.stderr.write(
    `${signal}: ${stats.sessions.opened} sessions, ${stats.appends} appends; arrival deviation (mock view) p99 ${a.p99 ?? '-'} ms max ${a.max ?? '-'} ms; mock loop lag max ${stats.event_loop_lag_ms.max ?? '-'} ms; mock CPU ${stats.cpu_cores.total} cores\n`,
  );
  return EXIT.ok;
}

/**
 * Waits for SIGINT or SIGTERM, or (unless `--outlive-parent`) for the process that started this one
 * to end, which is taken as SIGTERM; says which.
 */
function untilSignal(io: RunIo, options: ServeOptions): Promise<string> {
  return new Promise<string>((resolve) => {
    const done = (what: string) => {
      io.signals.off('SIGINT', onInt);
      io.signals.off('SIGTERM', onTerm);
      unwatch();
      resolve(what);
    };
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    const unwatch = options.outlive_parent ? () => undefined : watchParent(() => done('parent process ended'));
    io.signals.on('SIGINT', onInt);
    io.signals.on('SIGTERM', onTerm);
  });
}

async function writeStats(path: string | undefined, stats: unknown, io: RunIo): Promise<boolean> {
  if (!path) return true;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify(stats, null, 1));
    return true;
  } catch (err) {
    io.stderr.write(`error: cannot write stats to ${path}: ${(err as Error).message}\n`);
    return false;
  }
}

/** `serve --protocol time`: only the reference clock (`GET /duplex-bench/time`), for a real server's host. */
async function serveTime(options: ServeOptions, io: RunIo): Promise<number> {
  let clock;
  try {
    clock = await startTimeServer(options.host, options.port);
  } catch (err) {
    io.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`listening on ${clock.url} (reference clock)\n`);
  const signal = await untilSignal(io, options);
  await clock.close();
  io.stderr.write(`${signal}: ${clock.answered()} time requests answered\n`);
  return EXIT.ok;
}

/** `serve --protocol http`: an OpenAI-compatible SSE stub until SIGINT or SIGTERM. */
async function serveHttp(stubOptions: NonNullable<ServeOptions['http']>, options: ServeOptions, io: RunIo): Promise<number> {
  let stub;
  try {
    stub = await startHttpStub({ ...stubOptions, host: options.host, port: options.port });
  } catch (err) {
    io.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`listening on ${stub.url} (${stubOptions.kind})\n`);
  const signal = await untilSignal(io, options);
  const stats = stub.stats();
  await stub.close();
  if (!(await writeStats(options.stats_output, stats, io))) return EXIT.failed;
  io.stderr.write(`${signal}: ${stats.requests} requests, ${stats.completed} completed, ${stats.refused_429} refused (429); stub loop lag max ${stats.event_loop_lag_ms.max ?? '-'} ms; stub CPU ${stats.cpu_cores.total} cores\n`);
  return EXIT.ok;
}
