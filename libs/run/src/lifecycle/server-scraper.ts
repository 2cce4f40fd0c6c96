import { appendFile, rename, rm, writeFile } from 'node:fs/promises';
import { nodeTimerHost } from '@duplex-bench/pacer';
import { runFile } from '@duplex-bench/results';
import { ServerScrapers } from '@duplex-bench/telemetry';
import type { ServerMetricsOptions } from '@duplex-bench/cli';

/** The flags of the server's scrape, which a launched run's children go without (the launcher scrapes, once). */
export const SERVER_SCRAPE_FLAGS = ['server-metrics', 'server-metrics-interval-s', 'server-histogram', 'server-gauge'];

/**
 * The run's one scraper of the server's /metrics. Its rows go to server_metrics.jsonl as the run
 * goes, and the file is whole at the end: they are appended to `server_metrics.jsonl.part`, renamed
 * to its name when the scrape stops, so a reader never finds part of it. After a failed append (a
 * full disk) no more rows are written and the part is removed; `stop` gives the one line that names
 * the file and what is kept (the summary's server_metrics block, made from memory, still holds the
 * figures), which fails the run as any file it could not write does. `say` takes the scrapes' own
 * lines (a scrape that failed, a server that answers again).
 */
export async function serverScraper(o: NonNullable<ServerMetricsOptions['server_metrics']>, output: string, say: (line: string) => void) {
  const path = runFile(output, 'server_metrics');
  const part = `${path}.part`;
  let failure: string | null = null;
  const fail = (err: unknown) => {
    failure ??= `cannot write ${path} (${(err as Error).message}); kept the summary's server_metrics block`;
  };
  // A part that cannot even be made fails as a row that cannot be written: the run goes on without the file.
  await writeFile(part, '').catch(fail);
  let writing = Promise.resolve();
  const scraper = new ServerScrapers(o.urls, {
    interval_s: o.interval_s,
    extra_histograms: o.histograms,
    gauges: o.gauges,
    timers: nodeTimerHost,
    // Rows are small and once a second: appended in order, off the children's way.
    onRow: (line) => (writing = writing.then(() => (failure ? undefined : appendFile(part, line).catch(fail)))),
    say,
  });
  return {
    scraper,
    /** Stops the scrape and puts the file in place: null, or the line saying it could not be written. */
    stop: async (): Promise<string | null> => {
      await scraper.stop();
      await writing;
      if (!failure) await rename(part, path).catch(fail);
      if (failure) await rm(part, { force: true, recursive: true }).catch(() => undefined);
      return failure;
    },
  };
}
