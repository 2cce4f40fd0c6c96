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
 * to its name when the scrape stops, so a reader never finds part of it. A failed append (a full
 * disk) is said once, in one line naming the file and what is kept; no more rows are written and
 * the part is removed (the summary's server_metrics block, made from memory, still holds the figures).
 */
export async function serverScraper(o: NonNullable<ServerMetricsOptions['server_metrics']>, output: string, say: (line: string) => void) {
  const path = runFile(output, 'server_metrics');
  const part = `${path}.part`;
  await writeFile(part, '');
  let failed = false;
  let writing = Promise.resolve();
  const fail = (err: unknown) => {
    failed = true;
    say(`${path}: cannot write it (${(err as Error).message}); the server's rows are not kept, the summary's server_metrics block is`);
  };
  const scraper = new ServerScrapers(o.urls, {
    interval_s: o.interval_s,
    extra_histograms: o.histograms,
    gauges: o.gauges,
    timers: nodeTimerHost,
    // Rows are small and once a second: appended in order, off the children's way.
    onRow: (line) => (writing = writing.then(() => (failed ? undefined : appendFile(part, line).catch(fail)))),
    say,
  });
  return {
    scraper,
    stop: async () => {
      await scraper.stop();
      await writing;
      if (!failed) await rename(part, path).catch(fail);
      if (failed) await rm(part, { force: true, recursive: true }).catch(() => undefined);
    },
  };
}
