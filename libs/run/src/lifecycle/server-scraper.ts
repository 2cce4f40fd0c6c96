import { appendFile, writeFile } from 'node:fs/promises';
import { nodeTimerHost } from '@duplex-bench/pacer';
import { runFile } from '@duplex-bench/results';
import { ServerScrapers } from '@duplex-bench/telemetry';
import type { ServerMetricsOptions } from '@duplex-bench/cli';

/** The flags of the server's scrape, which a launched run's children go without (the launcher scrapes, once). */
export const SERVER_SCRAPE_FLAGS = ['server-metrics', 'server-metrics-interval-s', 'server-histogram', 'server-gauge'];

/** The run's one scraper of the server's /metrics, its rows appended to server_metrics.jsonl at the top. */
export async function serverScraper(o: NonNullable<ServerMetricsOptions['server_metrics']>, output: string, say: (line: string) => void) {
  const path = runFile(output, 'server_metrics');
  await writeFile(path, '');
  let writing = Promise.resolve();
  const scraper = new ServerScrapers(o.urls, {
    interval_s: o.interval_s,
    extra_histograms: o.histograms,
    gauges: o.gauges,
    timers: nodeTimerHost,
    // Rows are small and once a second: appended in order, off the children's way.
    onRow: (line) => (writing = writing.then(() => appendFile(path, line)).catch(() => undefined)),
    say,
  });
  return {
    scraper,
    stop: async () => {
      await scraper.stop();
      await writing;
    },
  };
}
