/**
 * What one call through an imported name costs under tsx. tsx (esbuild) compiles every module's
 * exports into getters, and a lib's index re-exports into getters on those getters; the shared
 * getter's keyed load is megamorphic, so V8 cannot inline it. A name bound once at module load
 * costs an ordinary call. Figures in ns per call of a trivial function, median of 5 rounds.
 *
 *   node --import tsx tools/bench/import-binding.ts
 */
import { base64ByteLength } from '@duplex-bench/protocol';
import * as protocol from '@duplex-bench/protocol';

const bound = protocol.base64ByteLength;
const B64 = 'AAAA';
const CALLS = 1e7;

function throughImport(): number {
  let x = 0;
  for (let i = 0; i < CALLS; i++) x += base64ByteLength(B64);
  return x;
}

function throughBinding(): number {
  let x = 0;
  for (let i = 0; i < CALLS; i++) x += bound(B64);
  return x;
}

const rounds: Record<string, number[]> = { 'imported name': [], 'bound once': [] };
let sink = 0;
for (let r = 0; r < 5; r++) {
  for (const [name, run] of [['imported name', throughImport], ['bound once', throughBinding]] as const) {
    const t0 = process.hrtime.bigint();
    sink += run();
    rounds[name].push(Number(process.hrtime.bigint() - t0) / CALLS);
  }
}
for (const [name, ns] of Object.entries(rounds)) {
  ns.sort((a, b) => a - b);
  console.log(`${name.padEnd(14)} ${ns[2].toFixed(1).padStart(6)} ns per call [${ns[0].toFixed(1)}–${ns[4].toFixed(1)}]`);
}
if (sink < 0) console.log(sink);
