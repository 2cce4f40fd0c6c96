/**
 * What live telemetry costs the client: `run` at N sessions against the native append-echo mock
 * (its own process), with the telemetry on and without it, interleaved (AB BA AB …) so both arms
 * see the same host. `--arm metrics`: `--metrics-port`, scraped every second by this script;
 * `--arm sampler`: `--sampler`, the /proc sampler at 5 ms in its own process (its own CPU is
 * reported apart, from its account in the summary); `--arm dashboard`: `--dashboard-port`, its
 * /live.json fetched every second by this script as the page does (its own time on the loop, looks
 * and answers, is read from /live.json's `cost`). The figure is the summary's client
 * CPU per packet cycle (`cpu_us_per_packet`: user + system CPU seconds of the probe over packets
 * sent); the ratio with/without is taken within each pair, and the median and range over pairs.
 * The compiled kit (`npm run build` first).
 *
 *   node --import tsx tools/bench/metrics-overhead.ts [--arm metrics|sampler|dashboard] [--sessions 512] [--duration 20] [--pairs 3] [--out DIR]
 *
 * Every process is bounded in time and stopped by its PID; traffic stays on 127.0.0.1.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hostInfo, hostLine } from './host';
import { exited, installInterrupts, openLog, ROOT, signalChild, spawnTracked, startMock, stopMock } from './processes';
import { freePort } from '@duplex-bench/mock-servers/testing';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '512' },
    duration: { type: 'string', default: '20' },
    pairs: { type: 'string', default: '3' },
    arm: { type: 'string', default: 'metrics' },
    out: { type: 'string', default: join('out', 'metrics-overhead') },
  },
});
const BIN = join(ROOT, 'dist', 'duplex-bench.js');
const sessions = Number(values.sessions);
const duration_s = Number(values.duration);
const arm = values.arm === 'sampler' ? 'sampler' : values.arm === 'dashboard' ? 'dashboard' : 'metrics';
const interrupted = { now: false, stop: (): void => undefined };
installInterrupts(() => {
  interrupted.now = true;
  interrupted.stop();
});


interface Arm {
  cpu_us_per_packet: number;
  cores: number;
  late: number;
  sent: number;
  scrapes: number;
  /** packets_sent_total in the last scrape, against the summary's count. */
  last_scraped_sent: number | null;
  /** The endpoint's own time building scrapes (duplex_bench_exposition_seconds_total, last scrape), and the run's CPU seconds. */
  exposition_s: number | null;
  cpu_s: number;
  /** --sampler: the sampler's own CPU in cores (its account), and its looks. */
  sampler: { cpu_cores: number | null; looks: number } | null;
}

async function one(dir: string, url: string, exporter: boolean): Promise<Arm> {
  await mkdir(dir, { recursive: true });
  const port = exporter && arm !== 'sampler' ? await freePort() : null;
  const args = ['run', '--url', url, '--concurrency', String(sessions), '--duration', String(duration_s), '--trace', 'off', '--output', join(dir, 'run'), '--quiet', '--allow-unqualified'];
  if (port !== null && arm === 'metrics') args.push('--metrics-port', String(port), '--metrics-linger-s', '2');
  if (port !== null && arm === 'dashboard') args.push('--dashboard-port', String(port), '--dashboard-linger-s', '2');
  if (exporter && arm === 'sampler') args.push('--sampler');
  const child = spawnTracked('client', process.execPath, [BIN, ...args], openLog(join(dir, 'probe.stdout.log')), openLog(join(dir, 'probe.stderr.log')));
  interrupted.stop = () => signalChild(child, 'SIGINT');
  let scrapes = 0;
  let last: number | null = null;
  let exposition: number | null = null;
  // A scraper as Prometheus is one: every second, from another process (this one), until the probe ends.
  const scraping =
    port === null
      ? null
      : setInterval(() => {
          fetch(`http://127.0.0.1:${port}/${arm === 'dashboard' ? 'live.json' : 'metrics'}`, { signal: AbortSignal.timeout(900) })
            .then((r) => r.text())
            .then((text) => {
              scrapes++;
              if (arm === 'dashboard') {
                const live = JSON.parse(text) as { rows: Array<{ values: Record<string, number> }>; cost: { look_ms: number } };
                last = live.rows.at(-1)?.values.duplex_bench_packets_sent_total ?? null;
                exposition = live.cost.look_ms / 1000;
                return;
              }
              const m = /^duplex_bench_packets_sent_total\{[^}]*\} (\d+)$/m.exec(text);
              if (m) last = Number(m[1]);
              const e = /^duplex_bench_exposition_seconds_total\{[^}]*\} ([0-9.e-]+)$/m.exec(text);
              if (e) exposition = Number(e[1]);
            })
            .catch(() => undefined);
        }, 1000);
  const code = await exited(child, (duration_s + 120) * 1000);
  if (scraping) clearInterval(scraping);
  const s = JSON.parse(await readFile(join(dir, 'run', 'summary.json'), 'utf8')) as {
    cpu_us_per_packet: number;
    cpu_cores: { total: number };
    packets: { sent: number; late: number };
    stalls?: { sampler: { cpu_cores: number | null; looks: number } | null };
  };
  if (code === null) throw new Error(`probe in ${dir} did not end`);
  return {
    cpu_us_per_packet: s.cpu_us_per_packet,
    cores: s.cpu_cores.total,
    late: s.packets.late,
    sent: s.packets.sent,
    scrapes,
    last_scraped_sent: last,
    exposition_s: exposition,
    cpu_s: (s.cpu_us_per_packet * s.packets.sent) / 1e6,
    sampler: s.stalls?.sampler ? { cpu_cores: s.stalls.sampler.cpu_cores, looks: s.stalls.sampler.looks } : null,
  };
}

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  const out = values.out as string;
  await mkdir(out, { recursive: true });
  const mock = await startMock(out, [], ROOT);
  const rows: string[] = [];
  const ratios: number[] = [];
  const shares: number[] = [];
  try {
    for (let p = 0; p < Number(values.pairs) && !interrupted.now; p++) {
      // AB, BA, AB, …: neither arm always runs first.
      const order = p % 2 === 0 ? [false, true] : [true, false];
      const got: Record<'off' | 'on', Arm | null> = { off: null, on: null };
      for (const exporter of order) {
        if (interrupted.now) break;
        got[exporter ? 'on' : 'off'] = await one(join(out, `pair${p}-${exporter ? 'on' : 'off'}`), mock.url, exporter);
      }
      const { off, on } = got;
      if (!off || !on) break;
      const ratio = on.cpu_us_per_packet / off.cpu_us_per_packet;
      ratios.push(ratio);
      // The exporter's own cost, measured inside the probe: its time building scrapes over the run's CPU.
      const share = on.exposition_s === null ? NaN : on.exposition_s / on.cpu_s;
      if (arm !== 'sampler') shares.push(share);
      else if (on.sampler?.cpu_cores != null) shares.push(on.sampler.cpu_cores);
      rows.push(
        `| ${p + 1} | ${order[0] ? 'on, off' : 'off, on'} | ${off.cpu_us_per_packet} µs (${off.cores} cores), ${off.late} late | ${on.cpu_us_per_packet} µs (${on.cores} cores), ${on.late} late | ${arm !== 'sampler' ? `${on.scrapes}, last ${on.last_scraped_sent} of ${on.sent} sent` : `${on.sampler?.looks ?? '-'} looks`} | ${ratio.toFixed(3)} | ${
          arm === 'sampler'
            ? `sampler's own CPU ${on.sampler?.cpu_cores ?? '-'} cores`
            : on.exposition_s === null
              ? '-'
              : `${(on.exposition_s * 1000).toFixed(1)} ms (${((on.exposition_s * 1e6) / Math.max(1, on.scrapes)).toFixed(0)} µs per scrape), ${(share * 100).toFixed(2)}%`
        } |`,
      );
    }
  } finally {
    await stopMock(mock);
  }
  process.stdout.write(
    [
      `host: ${hostLine(hostInfo(undefined))}`,
      `${sessions} sessions × ${duration_s} s, native append-echo mock in its own process, arm ${arm}; client CPU per packet cycle (summary cpu_us_per_packet)`,
      arm === 'metrics'
        ? '| pair | order | no exporter | --metrics-port, scraped each second | scrapes | with / without | building the scrapes, of the run\'s CPU |'
        : arm === 'dashboard'
          ? '| pair | order | no dashboard | --dashboard-port, /live.json fetched each second | fetches | with / without | its looks and answers, of the run\'s CPU |'
          : '| pair | order | no sampler | --sampler (5 ms) | looks | with / without | the sampler itself |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...rows,
      ratios.length > 0 ? `median ratio ${median(ratios).toFixed(3)} (range ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}, ${ratios.length} pairs)` : 'no pair finished',
      shares.length === 0
        ? ''
        : arm !== 'sampler'
          ? `${arm === 'dashboard' ? "the dashboard's looks and answers" : 'building the scrapes'}: median ${(median(shares) * 100).toFixed(2)}% of the client's CPU (range ${(Math.min(...shares) * 100).toFixed(2)}-${(Math.max(...shares) * 100).toFixed(2)}%)`
          : `the sampler's own CPU: median ${median(shares).toFixed(3)} cores (range ${Math.min(...shares).toFixed(3)}-${Math.max(...shares).toFixed(3)})`,
    ].join('\n') + '\n',
  );
}

main().catch((err: Error) => {
  process.stderr.write(`metrics-overhead: ${err.message}\n`);
  process.exitCode = 1;
});
