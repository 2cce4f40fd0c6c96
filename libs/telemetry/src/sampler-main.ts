/**
 * The external /proc sampler (`--sampler`): a process of its own that looks at each probe
 * process's main thread every `--interval-ms` (5) and writes what it saw, one JSON array a look,
 * `[t_s, pid, state, run_ms, wait_ms, wchan]`, then a last line with its own CPU. It ends on
 * SIGTERM (not SIGINT: that one drains the probe, which still needs looks), when every probe
 * process is gone, when its parent is, or after `--max-s`.
 * Being a process apart, it costs the probe's loop nothing.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { sampleThread } from './proc-sample';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const pids = (arg('pids') ?? '').split(',').map(Number).filter((p) => p > 0);
const out = arg('out');
const interval_ms = Number(arg('interval-ms') ?? 5);
const max_s = Number(arg('max-s') ?? 86_400);
if (!out || pids.length === 0 || !(interval_ms > 0)) {
  process.stderr.write('error: sampler: --pids P[,P…] --out FILE [--interval-ms 5] [--max-s S]\n');
  process.exit(2);
}

const fd = openSync(out, 'w');
const parent = process.ppid;
const origin = Number(process.hrtime.bigint()) / 1e6;
const cpu0 = process.cpuUsage();
let pending: string[] = [];
let flushed_at = origin;
let looks = 0;
let late = 0;
let k = 0;
let stopped = false;
let timer: NodeJS.Timeout | null = null;
const live = new Set(pids);

const flush = () => {
  if (pending.length === 0) return;
  writeSync(fd, pending.join(''));
  pending = [];
};

function stop(why: string): void {
  if (stopped) return;
  stopped = true;
  if (timer) clearTimeout(timer);
  flush();
  const cpu = process.cpuUsage(cpu0);
  const wall_s = (Number(process.hrtime.bigint()) / 1e6 - origin) / 1000;
  const cpu_s = (cpu.user + cpu.system) / 1e6;
  writeSync(fd, `${JSON.stringify({ sampler: { pids, interval_ms, looks, late_looks: late, wall_s: Math.round(wall_s * 1000) / 1000, cpu_s: Math.round(cpu_s * 1e6) / 1e6, cpu_cores: wall_s > 0 ? Math.round((cpu_s / wall_s) * 1e4) / 1e4 : null, ended_by: why } })}\n`);
  closeSync(fd);
  process.exit(0);
}

function tick(): void {
  if (stopped) return;
  for (const pid of live) {
    const s = sampleThread(pid);
    if (!s) {
      live.delete(pid);
      continue;
    }
    looks++;
    pending.push(`${JSON.stringify([Math.round(s.t_s * 1e6) / 1e6, s.pid, s.state, Math.round(s.run_ms * 1000) / 1000, Math.round(s.wait_ms * 1000) / 1000, s.wchan])}\n`);
  }
  // Written at least every 100 ms: a probe process reads the file at its end for its last stall.
  const t_ms = Number(process.hrtime.bigint()) / 1e6;
  if (pending.length >= 400 || t_ms - flushed_at >= 100) {
    flush();
    flushed_at = t_ms;
  }
  if (live.size === 0) return stop('every probe process ended');
  if (process.ppid !== parent) return stop('its parent ended');
  const now = Number(process.hrtime.bigint()) / 1e6;
  if (now - origin > max_s * 1000) return stop('--max-s');
  // An absolute schedule: a late look does not push the later ones back, and the slots it missed
  // are skipped, not made up in a burst.
  const next = Math.max(k + 1, Math.ceil((now - origin) / interval_ms));
  if (next > k + 1) late += next - k - 1;
  k = next;
  timer = setTimeout(tick, Math.max(0, origin + k * interval_ms - now));
}

process.on('SIGTERM', () => stop('SIGTERM'));
// A Ctrl-C reaches the whole process group: the probe then drains, and its stalls still need
// looks. The probe ends the sampler with SIGTERM once it is done (or it sees the probe gone).
process.on('SIGINT', () => undefined);
tick();
