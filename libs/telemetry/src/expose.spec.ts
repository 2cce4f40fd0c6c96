import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { exposeMetrics } from './expose';
import { counter } from './families';
import { TelemetryError, type MetricsEndpoint } from './metrics-endpoint';

describe('exposeMetrics', () => {
  const endpoints: MetricsEndpoint[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(endpoints.splice(0).map((e) => e.close()));
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('serves nothing and says nothing without a port', async () => {
    const say = jest.fn();
    await expect(exposeMetrics({ port: undefined, labels: { command: 'run' }, families: [], say })).resolves.toBeNull();
    expect(say).not.toHaveBeenCalled();
  });

  it('serves the families with the labels on every sample, and says where in one line', async () => {
    const lines: string[] = [];
    let sent = 4;
    const endpoint = await exposeMetrics({
      port: 0,
      labels: { command: 'run', protocol: 'openai', process: 1 },
      families: [counter('t_packets_sent_total', 'sent', () => sent)],
      say: (line) => lines.push(line),
    });
    if (!endpoint) throw new Error('no endpoint');
    endpoints.push(endpoint);
    expect(lines).toHaveLength(1);
    const url = /^metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics) \(Prometheus text format\)$/.exec(lines[0])?.[1];
    if (!url) throw new Error(`no URL in: ${lines[0]}`);
    sent = 9;
    const text = await (await fetch(url)).text();
    expect(text).toContain('t_packets_sent_total{command="run",protocol="openai",process="1"} 9');
  });

  it('throws a TelemetryError naming the port when it is taken, and says nothing', async () => {
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const say = jest.fn();
    const failed = exposeMetrics({ port, labels: {}, families: [], say });
    await expect(failed).rejects.toBeInstanceOf(TelemetryError);
    await expect(failed).rejects.toMatchObject({ code: 'TELEMETRY_PORT_IN_USE', message: expect.stringContaining(`127.0.0.1:${port} is in use`) });
    expect(say).not.toHaveBeenCalled();
  });
});
