/**
 * A preload that appends this process's memory to `$MEMLOG` every `$MEMLOG_S` seconds (10 by
 * default; main thread only): `process.memoryUsage()` and the committed size of V8's young and old
 * spaces, the `heapTotal`, `arrayBuffers` and one-second figures of docs/performance.md, "Long runs
 * in flat memory" and "What churn's RSS follows".
 *
 *   MEMLOG=mem.txt MEMLOG_S=1 node --import tsx --import ./tools/bench/memory-log.ts dist/duplex-bench.js run …
 */
import { openSync, writeSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MEMLOG;
const every_s = Number(process.env.MEMLOG_S ?? 10);
if (isMainThread && file) {
  if (!(every_s > 0)) throw new Error(`MEMLOG_S must be a positive number of seconds, not ${process.env.MEMLOG_S}`);
  const fd = openSync(file, 'w');
  const t0 = performance.now();
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  setInterval(() => {
    const m = process.memoryUsage();
    const space = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    writeSync(
      fd,
      `${((performance.now() - t0) / 1000).toFixed(0)} rss ${mib(m.rss)} heapTotal ${mib(m.heapTotal)} heapUsed ${mib(m.heapUsed)} new ${mib(space.new_space ?? 0)} old ${mib(space.old_space ?? 0)} external ${mib(m.external)} arrayBuffers ${mib(m.arrayBuffers)}\n`,
    );
  }, every_s * 1000).unref();
}
