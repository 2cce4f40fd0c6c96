import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EXIT, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { startMockServer } from './mock-server';
import { parseServeOptions, SERVE_FLAGS } from './serve-options';

/** `serve`: a mock server until SIGINT or SIGTERM; then it writes its stats and exits 0. */
async function serve(argv: string[], io: RunIo): Promise<number> {
  const options = parseServeOptions(argv);
  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (options.tls) {
    try {
      tls = { cert: await readFile(options.tls.cert), key: await readFile(options.tls.key) };
    } catch (err) {
      throw new UsageError(`--tls-cert/--tls-key: ${(err as Error).message}`);
    }
  }
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
      profile: options.profile,
      model: options.model,
    });
  } catch (err) {
    io.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`listening on ${server.url}\n`);
  const signal = await new Promise<string>((resolve) => {
    const on = (name: 'SIGINT' | 'SIGTERM') => () => {
      io.signals.off('SIGINT', onInt);
      io.signals.off('SIGTERM', onTerm);
      resolve(name);
    };
    const onInt = on('SIGINT');
    const onTerm = on('SIGTERM');
    io.signals.on('SIGINT', onInt);
    io.signals.on('SIGTERM', onTerm);
  });
  const stats = server.stats();
  await server.close();
  if (options.stats_output) {
    try {
      await mkdir(dirname(options.stats_output), { recursive: true });
      await writeFile(options.stats_output, JSON.stringify(stats, null, 1));
    } catch (err) {
      io.stderr.write(`error: cannot write stats to ${options.stats_output}: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
  }
  const a = stats.arrival_deviation_ms;
  io.stderr.write(
    `${signal}: ${stats.sessions.opened} sessions, ${stats.appends} appends; arrival deviation (mock view) p99 ${a.p99 ?? '-'} ms max ${a.max ?? '-'} ms; mock loop lag max ${stats.event_loop_lag_ms.max ?? '-'} ms; mock CPU ${stats.cpu_cores.total} cores\n`,
  );
  return EXIT.ok;
}

export const SERVE_COMMAND: CliCommand = {
  name: 'serve',
  summary: 'a mock realtime server (native, openai or vLLM-Omni flavour) until SIGINT or SIGTERM',
  usage: '[--protocol native|openai] [--profile NAME] [--port PORT] [flags]',
  flags: SERVE_FLAGS,
  run: serve,
};
