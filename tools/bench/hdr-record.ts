/**
 * What recording one value into an HDR histogram costs, ns per value, in one process: hdr-histogram-js's
 * own `recordValue` against `recordMs` (libs/metrics), on the histograms the probe records into
 * (`createUsHistogram`), four at a time as the pacing record does, values 0–5 ms. Then the CPU of
 * loading the package in a fresh `node` (its index; and only its builder and encoding), ms.
 * Prints each case's median and range over ROUNDS rounds of N values.
 *
 *   node --import tsx tools/bench/hdr-record.ts [ROUNDS=7] [N=2000000]
 */
import { execFileSync } from 'node:child_process';
import { createUsHistogram, recordMs } from '@duplex-bench/metrics';

const [rounds, n] = [Number(process.argv[2] ?? 7), Number(process.argv[3] ?? 2_000_000)];
if (!(Number.isInteger(rounds) && rounds > 0 && Number.isInteger(n) && n > 0)) {
  process.stderr.write('usage: hdr-record.ts [ROUNDS=7] [N=2000000] (whole numbers above 0)\n');
  process.exit(2);
}

const values_us = Array.from({ length: 4096 }, (_, i) => Math.round(((i * 2654435761) % 4096) * 1.22));

function median(label: string, unit: string, samples: number[]): void {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(1);
  console.log(`${label.padEnd(44)} ${at(0.5).padStart(7)} ${unit} [${at(0)}–${samples[samples.length - 1].toFixed(1)}]`);
}

function perValue(label: string, record: (h: ReturnType<typeof createUsHistogram>, us: number) => void): void {
  const ns: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const hs = [createUsHistogram(), createUsHistogram(), createUsHistogram(), createUsHistogram()];
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) record(hs[i & 3], values_us[i & 4095]);
    ns.push(Number(process.hrtime.bigint() - t0) / n);
  }
  median(label, 'ns per value', ns);
}

perValue('hdr-histogram-js recordValue', (h, us) => h.recordValue(us));
perValue('recordMs (libs/metrics)', (h, us) => recordMs(h, us / 1000));

/** CPU ms of `require(what)` in a fresh node, as the process counts it. */
function loadMs(what: string[]): number {
  const script = `const c = process.cpuUsage(); for (const m of ${JSON.stringify(what)}) require(m); const u = process.cpuUsage(c); process.stdout.write(String((u.user + u.system) / 1000));`;
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 }));
}
const whole: number[] = [];
const parts: number[] = [];
for (let r = 0; r < rounds; r++) {
  whole.push(loadMs(['hdr-histogram-js']));
  parts.push(loadMs(['hdr-histogram-js/dist/HistogramBuilder', 'hdr-histogram-js/dist/encoding']));
}
median("require('hdr-histogram-js')", 'ms CPU', whole);
median('its HistogramBuilder and encoding alone', 'ms CPU', parts);
