import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpSummary } from '@duplex-bench/http-load';
import { startHttpStub, startMockServer } from '@duplex-bench/mock-servers';
import type { RunSummary } from '@duplex-bench/results';
import { runBounded } from './spawn.spec-helpers';

jest.setTimeout(60_000);

/** OTLP/HTTP JSON, as much of it as the test reads. */
interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number };
}
interface OtlpMetric {
  name: string;
  unit?: string;
  sum?: { isMonotonic?: boolean; dataPoints: Array<{ asDouble?: number; asInt?: number | string; attributes: KeyValue[] }> };
  gauge?: { dataPoints: Array<{ asDouble?: number; attributes: KeyValue[] }> };
  histogram?: { dataPoints: Array<{ count: number | string; bucketCounts: Array<number | string>; explicitBounds: number[]; attributes: KeyValue[] }> };
}
interface OtlpBody {
  resourceMetrics: Array<{ resource: { attributes: KeyValue[] }; scopeMetrics: Array<{ metrics: OtlpMetric[] }> }>;
}

/** A collector's OTLP/HTTP metrics endpoint: keeps every body it is sent. */
function collector(): Promise<{ server: Server; url: string; bodies: OtlpBody[]; contentTypes: string[] }> {
  const bodies: OtlpBody[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/metrics' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      bodies.push(JSON.parse(Buffer.concat(chunks).toString()) as OtlpBody);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, contentTypes })));
}

const metricOf = (body: OtlpBody | undefined, name: string): OtlpMetric | undefined => body?.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)).find((m) => m.name === name);
const attr = (attrs: KeyValue[], key: string) => {
  const v = attrs.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.doubleValue);
};

/**
 * The built kit, as users run it: the OpenTelemetry exporter loads its HTTP transport with a dynamic
 * import, which jest's module sandbox cannot run in process.
 */
const DIST = join(__dirname, '..', '..', '..', 'dist', 'duplex-bench.js');
const kit = (args: string[]) => runBounded(process.execPath, [DIST, ...args], { bound_ms: 60_000, label: 'duplex-bench' });

describe('--otlp-endpoint', () => {
  it('run: the last push carries the packets sent and sessions completed that summary.json reports', async () => {
    const otlp = await collector();
    const mock = await startMockServer({ port: 0, profile: 'nemotron' });
    const out = await mkdtemp(join(tmpdir(), 'probe-otlp-'));
    let exit;
    try {
      exit = await kit(['run', '--url', mock.url, '--concurrency', '4', '--duration', '3', '--output', out, '--quiet', '--allow-unqualified', '--otlp-endpoint', otlp.url, '--otlp-interval-s', '1']);
    } finally {
      await mock.close();
      await new Promise((r) => otlp.server.close(r));
    }
    expect(exit).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
    // Pushes during the run, and one at the end with the final counts.
    expect(otlp.bodies.length).toBeGreaterThanOrEqual(3);
    expect(otlp.contentTypes[0]).toContain('application/json');
    const last = otlp.bodies.at(-1);
    const sent = metricOf(last, 'duplex_bench_packets_sent');
    expect(sent?.sum?.isMonotonic).toBe(true);
    const point = sent?.sum?.dataPoints[0];
    expect(Number(point?.asDouble ?? point?.asInt)).toBe(summary.packets.sent);
    expect(attr(point?.attributes ?? [], 'command')).toBe('run');
    const completed = metricOf(last, 'duplex_bench_sessions_completed')?.sum?.dataPoints[0];
    expect(Number(completed?.asDouble ?? completed?.asInt)).toBe(summary.sessions.completed);
    expect(metricOf(last, 'duplex_bench_pacing_deviation')).toMatchObject({ unit: 's' });
    expect(attr(last?.resourceMetrics[0].resource.attributes ?? [], 'service.name')).toBe('duplex-bench');
  });

  it("http: TTFT, the wait between chunks and E2E under the GenAI conventions' names, buckets and attributes", async () => {
    const otlp = await collector();
    const stub = await startHttpStub({ kind: 'variable-response', port: 0, first_chunk_ms: 50, inter_token_ms: 5, output_len_mean: 10 });
    const out = await mkdtemp(join(tmpdir(), 'probe-otlp-http-'));
    let exit;
    try {
      exit = await kit(['http', '--url', stub.url, '--rate', '20', '--duration', '2', '--output', out, '--quiet', '--allow-unqualified', '--otlp-endpoint', `${otlp.url}/v1/metrics`, '--otlp-interval-s', '1']);
    } finally {
      await stub.close();
      await new Promise((r) => otlp.server.close(r));
    }
    expect(exit).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as HttpSummary;
    const last = otlp.bodies.at(-1);
    const ttft = metricOf(last, 'gen_ai.client.operation.time_to_first_chunk')?.histogram?.dataPoints[0];
    expect(Number(ttft?.count)).toBe(summary.requests.completed);
    expect(ttft?.explicitBounds).toEqual([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]);
    expect(ttft?.bucketCounts.map(Number).reduce((a, b) => a + b, 0)).toBe(summary.requests.completed);
    expect(attr(ttft?.attributes ?? [], 'gen_ai.operation.name')).toBe('chat');
    expect(attr(ttft?.attributes ?? [], 'gen_ai.request.model')).toBe('stub');
    expect(Number(metricOf(last, 'gen_ai.client.operation.duration')?.histogram?.dataPoints[0].count)).toBe(summary.requests.completed);
    expect(metricOf(last, 'gen_ai.client.operation.time_per_output_chunk')?.histogram).toBeDefined();
    const sent = metricOf(last, 'duplex_bench_requests_sent')?.sum?.dataPoints[0];
    expect(Number(sent?.asDouble ?? sent?.asInt)).toBe(summary.requests.sent);
  });

  it('a collector that is not there is counted and said once; the run goes on', async () => {
    const mock = await startMockServer({ port: 0 });
    const out = await mkdtemp(join(tmpdir(), 'probe-otlp-down-'));
    let exit;
    try {
      exit = await kit(['run', '--url', mock.url, '--concurrency', '2', '--duration', '2', '--output', out, '--quiet', '--allow-unqualified', '--otlp-endpoint', 'http://127.0.0.1:9', '--otlp-interval-s', '0.5']);
    } finally {
      await mock.close();
    }
    expect(exit.code).toBe(0);
    expect(exit.stderr.match(/otlp: push to .* failed/g)).toHaveLength(1);
    expect(exit.stderr).toMatch(/otlp: \d+ push\(es\) failed, 0 delivered/);
  });
});
