import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverScraper } from './server-scraper';

const METRICS = '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n';

/** A /metrics endpoint on 127.0.0.1, and how many scrapes it has answered. */
async function metricsServer(): Promise<{ url: string; served: () => number; close: () => Promise<void> }> {
  let served = 0;
  const server: Server = createServer((_req, res) => {
    served++;
    res.end(METRICS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/metrics`, served: () => served, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Waits until `done()`, checking every 10 ms, for at most 5 s. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}

const exists = (path: string) => stat(path).then(() => true, () => false);

describe('serverScraper', () => {
  let server: Awaited<ReturnType<typeof metricsServer>>;
  let dir: string;
  beforeEach(async () => {
    server = await metricsServer();
    dir = await mkdtemp(join(tmpdir(), 'server-scraper-'));
  });
  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the rows in a part file while the run goes, and gives server_metrics.jsonl whole at the stop', async () => {
    const said: string[] = [];
    const s = await serverScraper({ urls: [server.url], interval_s: 0.05, histograms: [], gauges: [] }, dir, (line) => said.push(line));
    s.scraper.start();
    await until(() => server.served() >= 3);
    expect(await exists(join(dir, 'server_metrics.jsonl'))).toBe(false);
    expect(await s.stop()).toBeNull();
    // Every line whole, one per scrape (a scrape over its 50 ms bound is a row too, ok: false).
    const rows = (await readFile(join(dir, 'server_metrics.jsonl'), 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as { t_s: number });
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.every((r) => Number.isFinite(r.t_s))).toBe(true);
    expect(await exists(join(dir, 'server_metrics.jsonl.part'))).toBe(false);
    expect(said.filter((l) => l.includes('cannot write'))).toEqual([]);
  });

  it('gives one line naming the file when its rows cannot be written, and leaves no file of them', async () => {
    const said: string[] = [];
    const s = await serverScraper({ urls: [server.url], interval_s: 0.05, histograms: [], gauges: [] }, dir, (line) => said.push(line));
    // The part file's place taken by a directory: every append fails (EISDIR), as on a full disk.
    await rm(join(dir, 'server_metrics.jsonl.part'));
    await mkdir(join(dir, 'server_metrics.jsonl.part'));
    s.scraper.start();
    await until(() => server.served() >= 3);
    const failure = await s.stop();
    expect(failure).toMatch(/^cannot write \S*server_metrics\.jsonl \(.*EISDIR.*\); kept the summary's server_metrics block$/);
    expect(said.filter((l) => l.includes('cannot write'))).toEqual([]);
    expect(await exists(join(dir, 'server_metrics.jsonl'))).toBe(false);
    expect(await exists(join(dir, 'server_metrics.jsonl.part'))).toBe(false);
  });

  it('gives the same line when its part file cannot even be made, and scrapes on', async () => {
    await mkdir(join(dir, 'server_metrics.jsonl.part'));
    const s = await serverScraper({ urls: [server.url], interval_s: 0.05, histograms: [], gauges: [] }, dir, () => undefined);
    s.scraper.start();
    await until(() => server.served() >= 2);
    expect(await s.stop()).toMatch(/^cannot write \S*server_metrics\.jsonl \(.*EISDIR.*\); kept the summary's server_metrics block$/);
    expect(s.scraper.summary().scrapes.ok).toBeGreaterThanOrEqual(2);
    expect(await exists(join(dir, 'server_metrics.jsonl'))).toBe(false);
  });
});
