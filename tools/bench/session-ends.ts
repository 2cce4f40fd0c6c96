/**
 * What the sessions' last sample spills cost the loop when they all end together, as at the end
 * of a run: SESSIONS sessions of PACKETS packets each (a 30 s session is 375) are pushed into one
 * SampleStore spilling to nowhere, then all end back to back in a fresh process, as cold as at the
 * end of a run. Prints the whole burst in ms and per session in µs.
 *
 *   node --import tsx tools/bench/session-ends.ts [SESSIONS=512] [PACKETS=375]
 */
import { SampleStore } from '@duplex-bench/metrics';

const sessions = Number(process.argv[2] ?? 512);
const packets = Number(process.argv[3] ?? 375);
const store = new SampleStore(80);
let spilled = 0;
store.spillTo(() => spilled++);
const columns = Array.from({ length: sessions }, (_, s) => {
  const c = store.open(`s${s}`);
  for (let i = 0; i < packets; i++) c.push({ seq: i, scheduled_s: i * 0.08, start_s: i * 0.08 + 1e-4, completed_s: i * 0.08 + 2e-4, send_ms: 0.01, buffered_bytes: 0 });
  return c;
});
const t0 = process.hrtime.bigint();
for (const c of columns) c.end();
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
process.stdout.write(`${sessions} session ends of ${packets} packets each: ${ms.toFixed(1)} ms, ${((ms / sessions) * 1000).toFixed(0)} µs each (${spilled} values spilled)\n`);
