import type { RunIo } from '@duplex-bench/cli';
import type { Clock } from '@duplex-bench/pacer';
import { LiveDashboard, type Family } from '@duplex-bench/telemetry';

/** `--dashboard-port`: the live page, on the families /metrics reads, its address said in one line. */
export async function startDashboard(port: number, title: string, command: string[], families: Family[], clock: Clock, io: RunIo): Promise<LiveDashboard> {
  const page = (await io.dashboardPage?.(title)) ?? '<!doctype html><title>duplex-bench</title><p>The figures so far: <a href="live.json">live.json</a></p>';
  const dashboard = new LiveDashboard({ title, command: command.join(' '), families, page, clock });
  const url = await dashboard.listen(port);
  io.stderr.write(`dashboard: ${url} (live, once a second)\n`);
  return dashboard;
}
