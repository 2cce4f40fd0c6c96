import { join } from 'node:path';

/** Whether this code runs from the TypeScript sources (jest, tsx) or from the bundles in dist/. */
const FROM_SOURCES = __filename.endsWith('.ts');

/**
 * The file to start for one of the kit's process entries (the CLI, a worker). From the sources it
 * is the TypeScript module `source`, relative to `dir` (the caller's `__dirname`); from dist/, where
 * the build writes every entry flat beside the running bundle, it is `<built>.js` there.
 */
export function entryModule(dir: string, source: string, built: string): string {
  return FROM_SOURCES ? join(dir, `${source}.ts`) : join(__dirname, `${built}.js`);
}

/**
 * V8 flags every process of the kit starts with: the young generation fixed at its largest size
 * (16 MiB semi-spaces, V8's default maximum) instead of grown and shrunk by V8. With V8's sizing a
 * 256-session run marked its old generation about every half second (37 mark-compacts in 30 s
 * against 3) and a packet cycle cost 1.12× the CPU (docs/performance.md, "The young generation
 * fixed at 16 MiB"). Node reads them only at start: the executable's first line
 * (`bin/duplex-bench.js`), the image's entry point and the nx targets carry them too
 * (entry-module.spec.ts checks).
 */
export const KIT_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16'];

/** Node flags a child process of the kit starts with to run `module`: the kit's own, and tsx for a `.ts` source. */
export function nodeFlagsFor(module: string): string[] {
  return module.endsWith('.ts') ? [...KIT_NODE_FLAGS, '--import', 'tsx'] : [...KIT_NODE_FLAGS];
}
