/**
 * Self time by function in a window of a `node --cpu-prof` profile: from the first sample whose
 * stack holds MARKER (a function name), for WINDOW_MS. It found `serverEventSeq` scanning every
 * audio delta whole at the start of a 512-session openai run (docs/performance.md).
 *
 *   node --cpu-prof --cpu-prof-dir out/prof --import tsx apps/probe/src/main.ts run ... --protocol openai --concurrency 512 --duration 6
 *   node --import tsx tools/bench/cpu-profile-window.ts out/prof/CPU.*.001.cpuprofile openaiAppend [600]
 *
 * MARKER `-` takes the whole profile; --by-package adds self time by where the code lives
 * (node internals, ws, rxjs, hdr-histogram-js, each of our libs), idle and GC apart.
 * --gc-by-window S adds, for every S seconds of the whole profile from its start, the samples'
 * time in the garbage collector and out of idle (ms): how GC moves over a run.
 * --by-line adds the source lines that took the most samples over the whole profile (V8's
 * positionTicks: a line of a function, the code inlined there included), as a share of the busy
 * samples: it found a number made a string for every packet inside the pacing record, in a line
 * that only builds an error's message (docs/performance.md, issue 49, fourteenth round).
 * --tree NAME[:DEPTH] adds the whole profile's samples under every call of function NAME (outermost
 * calls only), as a tree of its callees merged by name and line, each with its share of the busy
 * samples (inclusive, and its own): which part of a path its cost is in, down to DEPTH (default 4)
 * levels (docs/performance.md, issue 49, fifteenth round).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  positionTicks?: Array<{ line: number; ticks: number }>;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const gcAt = argv.indexOf('--gc-by-window');
const gcWindow_s = gcAt >= 0 ? Number(argv[gcAt + 1]) : null;
if (gcWindow_s !== null && !(gcWindow_s > 0)) {
  process.stderr.write(`--gc-by-window must be a number of seconds > 0, got "${argv[gcAt + 1] ?? ''}"\n`);
  process.exit(2);
}
const treeAt = argv.indexOf('--tree');
const treeArg = treeAt >= 0 ? (argv[treeAt + 1] ?? '') : null;
const [treeName, treeDepthArg] = (treeArg ?? '').split(':');
const treeDepth = Number(treeDepthArg ?? 4);
if (treeArg !== null && (!treeName || !(Number.isInteger(treeDepth) && treeDepth >= 1))) {
  process.stderr.write(`--tree takes NAME[:DEPTH], a function's name and a depth of 1 or more, got "${treeArg}"\n`);
  process.exit(2);
}
const args = argv.filter(
  (a, i) => a !== '--by-package' && a !== '--by-line' && !(gcAt >= 0 && (i === gcAt || i === gcAt + 1)) && !(treeAt >= 0 && (i === treeAt || i === treeAt + 1)),
);
const byPackage = argv.includes('--by-package');
const byLine = argv.includes('--by-line');
const [file, marker, windowArg] = args;
if (!file || !marker) {
  process.stderr.write('usage: cpu-profile-window.ts FILE.cpuprofile MARKER [WINDOW_MS=600] [--by-package] [--by-line] [--gc-by-window S] [--tree NAME[:DEPTH]]\n');
  process.exit(2);
}
const window_us = marker === '-' ? Infinity : Number(windowArg ?? 600) * 1000;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** Samples per profile node, the whole profile: what --by-line and --tree add up. */
const counts = new Map<number, number>();
for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);

function stackHas(id: number, name: string): boolean {
  for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) if (byId.get(x)?.callFrame.functionName === name) return true;
  return false;
}

let t = profile.startTime;
const times = profile.timeDeltas.map((d) => (t += d));
const first = marker === '-' ? 0 : profile.samples.findIndex((id) => stackHas(id, marker));
if (first < 0) {
  process.stderr.write(`no sample under ${marker}\n`);
  process.exit(1);
}
const t0 = times[first];
const self = new Map<string, number>();
const packages = new Map<string, number>();
let total_us = 0;
/** Where a frame's code lives: a package under node_modules, one of our libs, node itself, or the VM's own entries. */
function packageOf(f: ProfileNode['callFrame']): string {
  if (f.functionName === '(idle)' || f.functionName === '(program)' || f.functionName === '(garbage collector)') return f.functionName;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (m) return m[1];
  const lib = /\/(libs|apps)\/([^/]+)\//.exec(f.url);
  if (lib) return `${lib[1]}/${lib[2]}`;
  if (f.url.startsWith('node:') || f.url === '') return f.url === '' ? '(native)' : 'node internals';
  return f.url.split('/').slice(-2).join('/');
}
for (let i = first; i < profile.samples.length && times[i] <= t0 + window_us; i++) {
  const dt = (times[i + 1] ?? times[i]) - times[i];
  const f = (byId.get(profile.samples[i]) as ProfileNode).callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  const pkg = packageOf(f);
  packages.set(pkg, (packages.get(pkg) ?? 0) + dt);
  total_us += dt;
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([key, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
const span = marker === '-' ? 'the whole profile' : `${window_us / 1000} ms from the first sample under ${marker}`;
const busy_us = total_us - (packages.get('(idle)') ?? 0);
const pkgRows = byPackage
  ? ['', `by package, of ${(busy_us / 1000).toFixed(1)} ms busy:`, ...[...packages].sort((a, b) => b[1] - a[1]).map(([k, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms  ${k === '(idle)' ? '' : `${((100 * us) / busy_us).toFixed(1).padStart(5)}%  `}${k}`)]
  : [];
console.log([`${span}; ${(total_us / 1000).toFixed(1)} ms sampled (idle included)`, ...rows, ...pkgRows].join('\n'));

if (gcWindow_s !== null) {
  const gc: number[] = [];
  const busy: number[] = [];
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (times[i + 1] ?? times[i]) - times[i];
    const w = Math.floor((times[i] - profile.startTime) / (gcWindow_s * 1e6));
    const name = (byId.get(profile.samples[i]) as ProfileNode).callFrame.functionName;
    if (name === '(garbage collector)') gc[w] = (gc[w] ?? 0) + dt;
    if (name !== '(idle)') busy[w] = (busy[w] ?? 0) + dt;
  }
  const lines = ['', `by ${gcWindow_s} s window from the profile's start: GC ms, busy ms (idle left out)`];
  for (let w = 0; w < busy.length; w++) lines.push(`${(w * gcWindow_s).toFixed(1).padStart(7)} s  ${((gc[w] ?? 0) / 1000).toFixed(1).padStart(8)} ms GC  ${((busy[w] ?? 0) / 1000).toFixed(1).padStart(8)} ms busy`);
  console.log(lines.join('\n'));
}

if (byLine) {
  const ticks = new Map<string, number>();
  let busyTicks = 0;
  for (const n of profile.nodes) {
    const f = n.callFrame;
    if (f.functionName === '(idle)') continue;
    busyTicks += counts.get(n.id) ?? 0;
    const at = f.url.split('/').slice(-2).join('/');
    // A node without line ticks (native code, the VM's own entries) counts at its function's line.
    const lines = n.positionTicks ?? [{ line: f.lineNumber + 1, ticks: counts.get(n.id) ?? 0 }];
    for (const p of lines) {
      const key = `${f.functionName || '(anonymous)'} ${at}:${p.line}`;
      ticks.set(key, (ticks.get(key) ?? 0) + p.ticks);
    }
  }
  const rows = [...ticks].sort((a, b) => b[1] - a[1]).slice(0, 30);
  console.log(['', `by source line, the whole profile, of ${busyTicks} busy samples:`, ...rows.map(([k, n]) => `${n.toString().padStart(8)}  ${((100 * n) / busyTicks).toFixed(1).padStart(5)}%  ${k}`)].join('\n'));
}

if (treeArg !== null) {
  let busy = 0;
  for (const [id, n] of counts) if (byId.get(id)?.callFrame.functionName !== '(idle)') busy += n;
  const inclusive = new Map<number, number>();
  const totalOf = (id: number): number => {
    let n = inclusive.get(id);
    if (n === undefined) {
      n = counts.get(id) ?? 0;
      for (const c of byId.get(id)?.children ?? []) n += totalOf(c);
      inclusive.set(id, n);
    }
    return n;
  };
  interface Branch {
    total: number;
    own: number;
    callees: Map<string, Branch>;
  }
  const branch = (): Branch => ({ total: 0, own: 0, callees: new Map() });
  const label = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'}:${n.callFrame.lineNumber + 1}`;
  const merge = (id: number, into: Branch, depth: number): void => {
    into.total += totalOf(id);
    into.own += counts.get(id) ?? 0;
    if (depth >= treeDepth) return;
    for (const c of byId.get(id)?.children ?? []) {
      const key = label(byId.get(c) as ProfileNode);
      let b = into.callees.get(key);
      if (!b) into.callees.set(key, (b = branch()));
      merge(c, b, depth + 1);
    }
  };
  const root = branch();
  const visit = (id: number): void => {
    const n = byId.get(id) as ProfileNode;
    if (n.callFrame.functionName === treeName) merge(id, root, 0);
    else for (const c of n.children ?? []) visit(c);
  };
  visit(profile.nodes[0].id);
  const pct = (n: number): string => `${((100 * n) / busy).toFixed(2)}%`;
  const lines = ['', `under ${treeName}, the whole profile, share of ${busy} busy samples (inclusive, own):`];
  const show = (b: Branch, name: string, indent: string): void => {
    lines.push(`${indent}${pct(b.total).padStart(7)} (${pct(b.own)})  ${name}`);
    // Callees under 0.2 % of the busy samples are left out.
    for (const [key, c] of [...b.callees].sort((x, y) => y[1].total - x[1].total)) if (c.total / busy >= 0.002) show(c, key, `${indent}  `);
  };
  if (root.total === 0) lines.push(`  no sample under ${treeName}`);
  else show(root, treeName, '');
  console.log(lines.join('\n'));
}
