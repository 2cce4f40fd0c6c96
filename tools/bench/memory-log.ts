/**
 * A preload that appends this process's memory to `$MEMLOG` every 10 s (main thread only): the
 * `heapTotal` and `arrayBuffers` figures of docs/performance.md, "Long runs in flat memory".
 *
 *   MEMLOG=mem.txt node --import tsx --import ./tools/bench/memory-log.ts dist/duplex-bench.js run …
 */
import { openSync, writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MEMLOG;
if (isMainThread && file) {
  const fd = openSync(file, 'w');
  const t0 = performance.now();
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  setInterval(() => {
    const m = process.memoryUsage();
    writeSync(fd, `${((performance.now() - t0) / 1000).toFixed(0)} rss ${mib(m.rss)} heapTotal ${mib(m.heapTotal)} heapUsed ${mib(m.heapUsed)} external ${mib(m.external)} arrayBuffers ${mib(m.arrayBuffers)}\n`);
  }, 10_000).unref();
}
