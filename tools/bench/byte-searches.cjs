/**
 * How many byte searches (`Buffer.prototype.indexOf`) a process makes, by needle, and what they cost:
 * a preload that wraps the method and, at exit, prints to stderr each needle's calls, the bytes
 * passed over (from the search's start to the match, or to the end when none), and the mean time of
 * the search itself (ns a call, timed around the original call with `process.hrtime.bigint`, whose
 * own cost, some 30-60 ns, is in it). `[big]` marks searches of buffers over 1,000 bytes (a native
 * audio delta is about 4.8 KB). It found about 24 searches per packet cycle in the probe's receive
 * path, 9 of them over each audio delta (docs/performance.md, issue 49's tenth round).
 *
 *   node --require ./tools/bench/byte-searches.cjs dist/duplex-bench.js run --url ws://127.0.0.1:PORT/v1/realtime \
 *     --concurrency 10 --duration 8 --output out/searches --quiet
 *
 * Divide the calls by the run's packets (its summary.json) for searches per packet cycle.
 */
'use strict';

const original = Buffer.prototype.indexOf;
const byNeedle = new Map();

Buffer.prototype.indexOf = function indexOf(needle, from, encoding) {
  const t0 = process.hrtime.bigint();
  const at = original.call(this, needle, from, encoding);
  const ns = Number(process.hrtime.bigint() - t0);
  const name = typeof needle === 'number' ? `byte ${String.fromCharCode(needle)}` : Buffer.isBuffer(needle) ? `bytes ${needle.toString('latin1')}` : `string ${String(needle)}`;
  const key = this.length > 1000 ? `${name} [big]` : name;
  const s = byNeedle.get(key) ?? { calls: 0, passed: 0, ns: 0 };
  const start = from === undefined ? 0 : from < 0 ? Math.max(0, this.length + from) : from;
  s.calls++;
  s.passed += (at < 0 ? this.length : at) - start;
  s.ns += ns;
  byNeedle.set(key, s);
  return at;
};

process.on('exit', () => {
  const rows = [...byNeedle].sort((a, b) => b[1].ns - a[1].ns);
  process.stderr.write('byte searches (Buffer.prototype.indexOf): calls, bytes passed over, mean ns a call, needle\n');
  for (const [key, s] of rows) {
    process.stderr.write(`${String(s.calls).padStart(9)} ${String(s.passed).padStart(12)} ${(s.ns / s.calls).toFixed(0).padStart(6)}  ${key.slice(0, 60)}\n`);
  }
});
