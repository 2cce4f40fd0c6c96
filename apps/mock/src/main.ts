import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { startMockServer } from '@duplex-bench/mock-servers';
import { UsageError } from '@duplex-bench/launcher';
import { parseServeOptions } from './serve-options';

/** `mock serve`: runs until SIGINT or SIGTERM, then writes its stats and exits 0. */
async function serve(argv: string[]): Promise<number> {
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
      profile: options.profile,
      model: options.model,
    });
  } catch (err) {
    process.stderr.write(`error: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`);
    return 1;
  }
  process.stdout.write(`listening on ${server.url}\n`);
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const stats = server.stats();
  await server.close();
  if (options.stats_output) {
    try {
      await mkdir(dirname(options.stats_output), { recursive: true });
      await writeFile(options.stats_output, JSON.stringify(stats, null, 1));
    } catch (err) {
      process.stderr.write(`error: cannot write stats to ${options.stats_output}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  const a = stats.arrival_deviation_ms;
  process.stderr.write(
    `${signal}: ${stats.sessions.opened} sessions, ${stats.appends} appends; arrival deviation (mock view) p99 ${a.p99 ?? '-'} ms max ${a.max ?? '-'} ms; mock loop lag max ${stats.event_loop_lag_ms.max ?? '-'} ms; mock CPU ${stats.cpu_cores.total} cores\n`,
  );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command !== 'serve') throw new UsageError('usage: mock serve [--protocol native|openai] [--profile append-echo|nemotron|minicpmo|model] [--port 8765] [--stats-output FILE]');
    return await serve(rest);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 5000).unref();
});
