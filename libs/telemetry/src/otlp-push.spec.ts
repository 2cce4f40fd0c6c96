import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createUsHistogram, recordMs } from '@duplex-bench/metrics';
import { AggregationTemporality, DataPointType, type Histogram as OtlpHistogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { counter, gauge, hdrHistogram } from './families';
import { GENAI_DURATION_BUCKETS_S, otlpMetrics, type OtlpPush, type OtlpPushOptions } from './otlp-push';

const START_MS = 1_700_000_000_123.5;
const NOW_MS = 1_700_000_060_250;

const byName = (metrics: MetricData[], name: string): MetricData => {
  const m = metrics.find((x) => x.descriptor.name === name);
  if (!m) throw new Error(`no ${name} among ${metrics.map((x) => x.descriptor.name).join(', ')}`);
  return m;
};

function histogramPoint(m: MetricData): OtlpHistogram {
  if (m.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${m.descriptor.name} is no histogram`);
  return m.dataPoints[0].value;
}

describe('otlpMetrics', () => {
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW_MS));
  afterEach(() => jest.restoreAllMocks());

  it("names a family by the GenAI conventions where they name it, else by its Prometheus name without _total and the unit's suffix", async () => {
    const h = createUsHistogram();
    const metrics = await otlpMetrics(
      [
        hdrHistogram('duplex_bench_request_ttft_seconds', 'ttft', [1], () => h),
        hdrHistogram('duplex_bench_request_e2e_seconds', 'e2e', [1], () => h),
        hdrHistogram('duplex_bench_request_inter_chunk_seconds', 'itl', [1], () => h),
        counter('duplex_bench_packets_sent_total', 'sent', () => 1),
        counter('duplex_bench_cpu_seconds_total', 'cpu', () => 1),
        gauge('duplex_bench_resident_memory_bytes', 'rss', () => 1),
        gauge('duplex_bench_sessions_active', 'active', () => 1),
      ],
      {},
      START_MS,
    );
    expect(metrics.map((m) => [m.descriptor.name, m.descriptor.unit])).toEqual([
      ['gen_ai.client.operation.time_to_first_chunk', 's'],
      ['gen_ai.client.operation.duration', 's'],
      ['gen_ai.client.operation.time_per_output_chunk', 's'],
      ['duplex_bench_packets_sent', '1'],
      ['duplex_bench_cpu', 's'],
      ['duplex_bench_resident_memory', 'By'],
      ['duplex_bench_sessions_active', '1'],
    ]);
    expect(metrics[3].descriptor.description).toBe('sent');
  });

  it('gives a counter as a monotonic cumulative sum and a gauge as a gauge, with the labels and the run start to now on every point', async () => {
    let sent = 5;
    const families = [
      counter('t_sent_total', 'sent', () => sent),
      gauge('t_active', 'active', () => [
        { value: 2, labels: { dialect: 'openai' } },
        { value: 1, labels: { dialect: 'native' } },
      ]),
    ];
    let metrics = await otlpMetrics(families, { command: 'run', process: 0 }, START_MS);
    const sum = byName(metrics, 't_sent');
    expect(sum).toMatchObject({ dataPointType: DataPointType.SUM, isMonotonic: true, aggregationTemporality: AggregationTemporality.CUMULATIVE });
    expect(sum.dataPoints).toEqual([{ startTime: [1_700_000_000, 123_500_000], endTime: [1_700_000_060, 250_000_000], attributes: { command: 'run', process: 0 }, value: 5 }]);
    const active = byName(metrics, 't_active');
    expect(active.dataPointType).toBe(DataPointType.GAUGE);
    expect(active.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ command: 'run', process: 0, dialect: 'openai' }, 2],
      [{ command: 'run', process: 0, dialect: 'native' }, 1],
    ]);
    sent = 9; // read at each push, as a scrape reads it
    metrics = await otlpMetrics(families, {}, START_MS);
    expect(byName(metrics, 't_sent').dataPoints[0].value).toBe(9);
  });

  it('cuts a histogram into per-bucket counts on the GenAI boundaries, the last above the top one, with sum, count and max in seconds', async () => {
    const h = createUsHistogram();
    for (const ms of [5, 15, 15, 300, 100_000]) recordMs(h, ms);
    const metrics = await otlpMetrics([hdrHistogram('duplex_bench_request_e2e_seconds', 'e2e', [0.1, 1], () => h)], { command: 'http' }, START_MS);
    const m = byName(metrics, 'gen_ai.client.operation.duration');
    expect(m.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    expect(m.dataPoints[0].attributes).toEqual({ command: 'http' });
    const v = histogramPoint(m);
    expect(v.buckets.boundaries).toEqual(GENAI_DURATION_BUCKETS_S);
    const expected = new Array<number>(GENAI_DURATION_BUCKETS_S.length + 1).fill(0);
    expected[0] = 1; // 5 ms ≤ 0.01 s
    expected[1] = 2; // 15 ms in (0.01, 0.02]
    expected[5] = 1; // 300 ms in (0.16, 0.32]
    expected[GENAI_DURATION_BUCKETS_S.length] = 1; // 100 s above 81.92 s
    expect(v.buckets.counts).toEqual(expected);
    expect(v.count).toBe(5);
    expect(v.sum).toBeCloseTo(100.335, 1);
    expect(v.max).toBeCloseTo(100, 0);
    // HDR keeps no zero minimum: none is sent.
    expect(v.min).toBeUndefined();
  });

  it("cuts an RTF histogram (ratio × 10⁶) on ratio boundaries around 1, and other histograms on the exposition's decades", async () => {
    const rtf = createUsHistogram();
    for (const ratio of [0.5, 0.95, 1.2]) rtf.recordValue(Math.round(ratio * 1e6));
    const lag = createUsHistogram();
    recordMs(lag, 3);
    const metrics = await otlpMetrics([hdrHistogram('duplex_bench_response_rtf', 'rtf', [1], () => rtf), hdrHistogram('duplex_bench_event_loop_lag_seconds', 'lag', [1], () => lag)], {}, START_MS);
    const r = histogramPoint(byName(metrics, 'duplex_bench_response_rtf'));
    expect(r.buckets.boundaries).toEqual([0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 4]);
    expect(r.buckets.counts).toEqual([0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0]);
    expect(r.sum).toBeCloseTo(2.65, 3);
    const l = histogramPoint(byName(metrics, 'duplex_bench_event_loop_lag'));
    expect(l.buckets.boundaries[0]).toBe(0.0005);
    // 3 ms in (0.002, 0.005]
    expect(l.buckets.boundaries.slice(2, 4)).toEqual([0.002, 0.005]);
    expect(l.buckets.counts[3]).toBe(1);
    expect(l.buckets.counts.reduce((a, c) => a + c, 0)).toBe(1);
  });

  it('gives an empty or absent recorder as zero counts, without a max', async () => {
    const metrics = await otlpMetrics([hdrHistogram('t_empty_seconds', 'e', [1], () => createUsHistogram()), hdrHistogram('t_none_seconds', 'n', [1], () => null)], {}, START_MS);
    for (const name of ['t_empty', 't_none']) {
      const v = histogramPoint(byName(metrics, name));
      expect([v.count, v.sum, v.max, v.buckets.counts.every((c) => c === 0)]).toEqual([0, 0, undefined, true]);
    }
  });
});

/** An OTLP/HTTP receiver on 127.0.0.1 (port 0) that answers every push with `status` and keeps what it got. */
async function receiver(status: number) {
  const pushes: Array<{ path: string; contentType: string | undefined; body: string }> = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      pushes.push({ path: req.url ?? '', contentType: req.headers['content-type'], body });
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : '{"code":3,"message":"bad"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pushes,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type PushCase = Pick<OtlpPushOptions, 'endpoint' | 'labels' | 'resource' | 'interval_s'> & {
  /** Close only once the push has said its first failure (a periodic push failed): then close's push fails a second time. */
  closeAfterFirstSay?: boolean;
};
interface PushOutcome {
  result: Awaited<ReturnType<OtlpPush['close']>>;
  said: string[];
}

/**
 * The OTLP exporter loads `http` with a dynamic import(), which jest's module sandbox refuses
 * without --experimental-vm-modules: the pushes run in a node process of their own (through tsx,
 * as the CLI runs from source), each case's OtlpPush started, then closed; the receivers stay here.
 */
function pushInChild(cases: PushCase[]): Promise<PushOutcome[]> {
  const code = `
    const { OtlpPush } = require(${JSON.stringify(join(__dirname, 'otlp-push.ts'))});
    const { counter } = require(${JSON.stringify(join(__dirname, 'families.ts'))});
    (async () => {
      const out = [];
      for (const c of JSON.parse(process.argv[1])) {
        const said = [];
        let firstSay;
        const saidOnce = new Promise((resolve) => (firstSay = resolve));
        const push = await OtlpPush.start({ ...c, families: [counter('t_packets_sent_total', 'sent', () => 7)], say: (line) => { said.push(line); firstSay(); } });
        if (c.closeAfterFirstSay) {
          // The reader's timer does not hold a process open (a command's run does): this handle does, meanwhile.
          const open = setInterval(() => undefined, 60_000);
          await saidOnce;
          clearInterval(open);
        }
        out.push({ result: await push.close(), said });
      }
      // The exporter's keep-alive sockets would hold the process past its work: it ends once its answer is out.
      process.stdout.write(JSON.stringify(out), () => process.exit(0));
    })().catch((err) => { process.stderr.write(String(err && err.stack)); process.exitCode = 1; });
  `;
  return new Promise((resolve, reject) => {
    // The timeout ends the child if it hangs; it ends on its own once its pushes are closed.
    execFile(process.execPath, ['--import', 'tsx', '-e', code, JSON.stringify(cases)], { cwd: join(__dirname, '..', '..', '..'), timeout: 20_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as PushOutcome[]),
    );
  });
}

interface OtlpJson {
  resourceMetrics: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeMetrics: Array<{ scope: { name: string }; metrics: Array<{ name: string; sum?: { dataPoints: Array<{ asDouble?: number; attributes: Array<{ key: string; value: { stringValue?: string } }> }> } }> }>;
  }>;
}

describe('OtlpPush', () => {
  let base: Awaited<ReturnType<typeof receiver>>;
  let full: Awaited<ReturnType<typeof receiver>>;
  let refusing: Awaited<ReturnType<typeof receiver>>;
  let outcomes: PushOutcome[];

  beforeAll(async () => {
    [base, full, refusing] = await Promise.all([receiver(200), receiver(200), receiver(400)]);
    outcomes = await pushInChild([
      { endpoint: `${base.base}/`, interval_s: 60, labels: { command: 'run' }, resource: { 'service.name': 'duplex-bench' } },
      { endpoint: `${full.base}/collector/v1/metrics`, interval_s: 60, labels: {}, resource: {} },
      // Pushes every 50 ms until the first refusal is said, then closes: two refusals at least, one line.
      { endpoint: refusing.base, interval_s: 0.05, labels: {}, resource: {}, closeAfterFirstSay: true },
    ]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([base, full, refusing].filter(Boolean).map((r) => r.close()));
  });

  it('pushes the families once, at close, to <endpoint>/v1/metrics, as OTLP JSON with the resource and the labels, and counts the export', () => {
    const [o] = outcomes;
    expect(o.result).toEqual({ exports: 1, failures: 0, first_failure: null });
    expect(o.said).toEqual([]);
    expect(base.pushes.map((p) => [p.path, p.contentType])).toEqual([['/v1/metrics', 'application/json']]);
    const rm = (JSON.parse(base.pushes[0].body) as OtlpJson).resourceMetrics[0];
    expect(rm.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'duplex-bench' } });
    const sent = rm.scopeMetrics.find((s) => s.scope.name === 'duplex-bench')?.metrics.find((m) => m.name === 't_packets_sent');
    expect(sent?.sum?.dataPoints[0].asDouble).toBe(7);
    expect(sent?.sum?.dataPoints[0].attributes).toContainEqual({ key: 'command', value: { stringValue: 'run' } });
  });

  it('takes an endpoint that already names /v1/metrics (behind a path of its own) as it is', () => {
    expect(full.pushes.map((p) => p.path)).toEqual(['/collector/v1/metrics']);
    expect(outcomes[1].result.exports).toBe(1);
  });

  it('counts every push the collector refuses, says so once, and goes on', () => {
    const { result, said } = outcomes[2];
    expect(refusing.pushes.length).toBeGreaterThanOrEqual(2);
    expect(result.exports).toBe(0);
    expect(result.failures).toBeGreaterThanOrEqual(2);
    expect(result.first_failure).toEqual(expect.any(String));
    expect(said).toEqual([`otlp: push to ${refusing.base}/v1/metrics failed (${result.first_failure}); counted, the run goes on`]);
  });
});
