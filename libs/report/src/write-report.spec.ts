import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSamples, PacingRecorder, SampleStore } from '@duplex-bench/metrics';
import { writeReport } from './write-report';

/** The page's heading and its inlined data. */
const heading = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];
const data = (html: string) => JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)?.[1] ?? 'null') as Record<string, unknown>;
const exists = (path: string) => access(path).then(() => true, () => false);

describe('writing the page of a directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'write-report-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A run of one session of 10 packets, none late. */
  async function run(): Promise<void> {
    const store = new SampleStore(80);
    const col = store.open('s0');
    for (let seq = 0; seq < 10; seq++) col.push({ seq, scheduled_s: 10 + seq * 0.08, start_s: 10 + seq * 0.08, completed_s: 10 + seq * 0.08, send_ms: 0.1, buffered_bytes: 0 });
    await writeFile(join(dir, 'samples.msgpack'), encodeSamples(store.toFile(new PacingRecorder(80))));
    await writeFile(join(dir, 'summary.json'), JSON.stringify({ qualified: true, interrupted: false, packet_ms: 80, packets: { sent: 10, late: 0 }, sessions: { started: 1, completed: 1, incomplete: 0, with_violation: 0, incomplete_reasons: {} } }));
  }

  const sweep = () =>
    writeFile(
      join(dir, 'sweep.json'),
      JSON.stringify({
        format: 'duplex-bench.sweep',
        version: 1,
        settings: { url: 'ws://127.0.0.1:9', target: 'server', protocol: 'openai', duration_s: 10, runs: 1, slo: 'underruns=0', run_args: '', processes: 1, max_processes: 1 },
        points: [],
        capacity: { sessions: null, range: [null, null], limited_by: null, note: 'nothing tested' },
        interrupted: false,
        measurement_origin: {},
      }),
    );

  /** An http run's summary: a closed loop of one request, no figure kept. */
  const httpSummary = {
    kind: 'http',
    qualified: true,
    unqualified_reason: null,
    interrupted: false,
    load: { mode: 'closed', concurrency: 2, endpoint: 'chat', stream: true, max_tokens: 8, prompts: 'p', seed: 1 },
    warmup_s: 0,
    requests: { sent: 1, completed: 1, failed: 0, steady: 1, errors: {}, statuses: { '200': 1 } },
    window_s: 1,
    requests_per_s: 1,
    output_tokens_per_s: 8,
    tokens: { output: 8, origin: 'usage', by_origin: { usage: 1 }, output_mean: 8, prompt_mean: 4 },
    latency_ms: {},
    client: { max_send_lag_ms: 10, event_loop_lag_ms: { max: 1 }, cpu_cores: { user: 0, system: 0, total: 0 }, peak_rss_mib: 50 },
    measurement_origin: {},
    histograms: {},
  };

  it("writes a run's page to report.html in the run's directory and returns its path", async () => {
    await run();
    const path = await writeReport(dir);
    expect(path).toBe(join(dir, 'report.html'));
    const html = await readFile(path, 'utf8');
    expect(heading(html)).toBe(`duplex-bench run: ${dir}`);
    expect(data(html)).toMatchObject({ kind: 'run', packets: { sent: 10, late: 0 } });
  });

  it('hands the bin, the SLO and the output path on to the run page', async () => {
    await run();
    const output = join(dir, 'elsewhere.html');
    expect(await writeReport(dir, { output, bin_s: 2, slo: 'underruns=0' })).toBe(output);
    expect(await exists(join(dir, 'report.html'))).toBe(false);
    expect(data(await readFile(output, 'utf8'))).toMatchObject({ bin_s: 2, server_verdict: { slo: 'underruns=0', source: '--slo' } });
  });

  it("writes a sweep's capacity page when the directory holds sweep.json, whatever else it holds", async () => {
    await writeFile(join(dir, 'summary.json'), JSON.stringify(httpSummary));
    await sweep();
    const html = await readFile(await writeReport(dir), 'utf8');
    expect(heading(html)).toBe(`duplex-bench sweep: ${dir}`);
    expect(data(html)).toMatchObject({ kind: 'sweep', capacity: { note: 'nothing tested' } });
  });

  it("writes an http run's requests page when its summary is of kind http", async () => {
    await writeFile(join(dir, 'summary.json'), JSON.stringify(httpSummary));
    const html = await readFile(await writeReport(dir), 'utf8');
    expect(heading(html)).toBe(`duplex-bench http: ${dir}`);
    expect(data(html)).toMatchObject({ kind: 'http', drawn: { requests: 0 } });
  });

  it('writes nothing for a directory that is not a run, and rejects with the reason', async () => {
    await expect(writeReport(dir)).rejects.toMatchObject({ name: 'ReportInputError', code: 'NOT_A_RUN' });
    expect(await exists(join(dir, 'report.html'))).toBe(false);
  });
});
