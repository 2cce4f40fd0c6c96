/**
 * Splits a `perf record` of a probe or mock (tools/bench/perf-record.sh) into where its CPU went,
 * in µs per packet cycle: the kernel, V8 (GC, JSON, property lookups, built-ins, the rest), Node's
 * C++ and JavaScript, ws, rxjs, each of our libs, and the process's other threads (GC helpers,
 * the writer). Each sample counts where it landed (self time): a function V8 inlined counts in its
 * caller, so the JavaScript rows are approximate at the edges; the kernel, V8 and Node rows are not.
 *
 *   node --import tsx tools/bench/perf-categories.ts OUT_DIR/probe.data [--packets-per-s 6400] [--window-s 8] [--hz 2000] [--top 0]
 *
 * --packets-per-s: packets the window carried per second (512 sessions × 12.5 = 6,400).
 * --top N also lists the N hottest symbols of the main thread.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'packets-per-s': { type: 'string', default: '6400' },
    'window-s': { type: 'string', default: '8' },
    hz: { type: 'string', default: '2000' },
    top: { type: 'string', default: '0' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: perf-categories.ts PERF.data [--packets-per-s 6400] [--window-s 8] [--hz 2000] [--top 0]\n');
  process.exit(2);
}
const packets = Number(values['packets-per-s']) * Number(values['window-s']);
const us_per_sample = 1e6 / Number(values.hz);

interface Sample {
  tid: string;
  /** The frame the sample landed in: its symbol, and its object file. */
  symbol: string;
  dso: string;
}

const text = execFileSync('perf', ['script', '-i', positionals[0], '-F', 'tid,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
const samples: Sample[] = [];
for (const block of text.split('\n\n')) {
  const lines = block.split('\n').filter((l) => l.trim());
  if (lines.length < 2 || !/^\s*\d+\s*$/.test(lines[0])) continue;
  const leaf = /^\s*[0-9a-f]+ (.*) \((.*)\)$/.exec(lines[1]);
  samples.push({ tid: lines[0].trim(), symbol: leaf ? leaf[1] : lines[1].trim(), dso: leaf ? leaf[2] : '' });
}

const perThread = new Map<string, number>();
for (const s of samples) perThread.set(s.tid, (perThread.get(s.tid) ?? 0) + 1);
const main = [...perThread].sort((a, b) => b[1] - a[1])[0]?.[0];

/**
 * Where a line of a bundle in dist/ came from: esbuild heads each module it takes in with a
 * `// libs/NAME/src/FILE.ts` line, so a JIT symbol at `dist/X.js:LINE` belongs to the module whose
 * heading is the last one above LINE.
 */
const bundleModules = new Map<string, Array<{ line: number; path: string }>>();
function bundleModuleOf(file: string, line: number): string | undefined {
  let heads = bundleModules.get(file);
  if (!heads) {
    heads = [];
    readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      const m = /^\/\/ ((?:libs|apps|node_modules)\/\S+)$/.exec(text);
      if (m) heads?.push({ line: i + 1, path: m[1] });
    });
    bundleModules.set(file, heads);
  }
  let found: string | undefined;
  for (const h of heads) if (h.line <= line) found = h.path;
  return found;
}

function category(s: Sample): string {
  if (s.tid !== main) return 'other threads (GC helpers, writer, JIT)';
  const sym = s.symbol;
  if (s.dso.includes('kernel')) return 'kernel (system calls, TCP on loopback)';
  if (/Scaveng|MarkCompact|Heap::|Sweep|Marking|Evacuat|RecordWrite|Remembered|SlotSet/.test(sym)) return 'V8: garbage collection and write barriers';
  if (/Json/.test(sym)) return 'V8: JSON.parse';
  if (/LoadIC|StoreIC|StringTable/.test(sym)) return 'V8: property lookups (inline caches)';
  if (/malloc|free|_int_|unlink_chunk|ArrayBufferAllocator|BackingStore/.test(sym)) return 'malloc/free (array buffers)';
  if (sym.startsWith('JS:')) {
    if (sym.includes('node_modules/ws/')) return 'JavaScript: ws';
    if (sym.includes('node_modules/rxjs/')) return 'JavaScript: rxjs';
    if (sym.includes('node_modules/hdr-histogram-js/')) return 'JavaScript: hdr-histogram-js';
    if (sym.includes('node:')) return 'JavaScript: Node (streams, timers)';
    const bundled = /(\/\S+\/dist\/[^/\s]+\.js):(\d+)/.exec(sym);
    const source = bundled ? (bundleModuleOf(bundled[1], Number(bundled[2])) ?? '') : sym;
    const lib = /(?:^|\/)(libs|apps)\/([^/]+)\//.exec(source);
    if (lib) return `JavaScript: ${lib[1]}/${lib[2]}`;
    const pkg = /(?:^|\/)node_modules\/([^/]+)\//.exec(source);
    if (pkg) return `JavaScript: ${pkg[1]}`;
    return 'JavaScript: other';
  }
  if (sym.startsWith('Builtins_')) return 'V8: built-ins (calls, typed arrays, strings)';
  if (/node::|uv_|uv__/.test(sym)) return 'Node and libuv C++';
  if (sym.includes('v8::')) return 'V8: runtime (callbacks into JavaScript, strings)';
  return 'other native code (libc)';
}

const byCategory = new Map<string, number>();
for (const s of samples) {
  const c = category(s);
  byCategory.set(c, (byCategory.get(c) ?? 0) + 1);
}
const us = (n: number) => ((n * us_per_sample) / packets).toFixed(2);
console.log(`${positionals[0]}: ${samples.length} samples over ${packets} packet cycles; µs per packet cycle`);
console.log('| where | µs per packet cycle |\n| --- | --- |');
for (const [c, n] of [...byCategory].sort((a, b) => b[1] - a[1])) console.log(`| ${c} | ${us(n)} |`);
console.log(`| **total** | **${us(samples.length)}** |`);

const top = Number(values.top);
if (top > 0) {
  const bySymbol = new Map<string, number>();
  for (const s of samples) if (s.tid === main) bySymbol.set(s.symbol, (bySymbol.get(s.symbol) ?? 0) + 1);
  console.log(`\nhottest symbols of the main thread (self):`);
  for (const [sym, n] of [...bySymbol].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${us(n).padStart(7)}  ${sym.slice(0, 140)}`);
}
