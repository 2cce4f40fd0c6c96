import { counter, gauge } from './families';
import { MetricsEndpoint, TelemetryError } from './metrics-endpoint';

describe('MetricsEndpoint', () => {
  const open: MetricsEndpoint[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });

  it('serves the families on 127.0.0.1 with the default labels, read at each scrape', async () => {
    let sent = 3;
    const e = new MetricsEndpoint([counter('t_packets_sent_total', 'sent', () => sent), gauge('t_active', 'active', () => [{ value: 2, labels: { reason: 'a' } }])], { command: 'run', process: 0 });
    open.push(e);
    const url = await e.listen(0);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    let text = await (await fetch(url)).text();
    expect(text).toContain('# TYPE t_packets_sent_total counter');
    expect(text).toContain('t_packets_sent_total{command="run",process="0"} 3');
    expect(text).toContain('t_active{reason="a",command="run",process="0"} 2');
    sent = 7;
    text = await (await fetch(url)).text();
    expect(text).toContain('t_packets_sent_total{command="run",process="0"} 7');
    expect(e.scrapes).toBe(2);
    expect((await fetch(url.replace('/metrics', '/'))).status).toBe(404);
  });

  it('says which port is taken', async () => {
    const first = new MetricsEndpoint([], {});
    open.push(first);
    const port = Number(new URL(await first.listen(0)).port);
    const second = new MetricsEndpoint([], {});
    open.push(second);
    await expect(second.listen(port)).rejects.toThrow(TelemetryError);
    await expect(second.listen(port)).rejects.toThrow(`127.0.0.1:${port} is in use`);
  });

  it('lingers until its time is up or the cut comes, whichever is first', async () => {
    const e = new MetricsEndpoint([], {});
    open.push(e);
    await e.listen(0);
    const t0 = performance.now();
    await e.linger(60, Promise.resolve());
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
