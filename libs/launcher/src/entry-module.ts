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
 * V8 flags every process of the kit starts with, read by Node only at start: the executable's
 * first line (`bin/duplex-bench.js`), the image's entry point and the nx targets carry them too
 * (entry-module.spec.ts checks). See docs/performance.md, "The young generation fixed at 16 MiB",
 * "Receive delay at 512 sessions" and "Reads into a buffer of the socket's own".
 *
 * - `--min-semi-space-size=16`: the young generation fixed at its largest size (16 MiB
 *   semi-spaces, V8's default maximum) instead of grown and shrunk by V8. With V8's sizing a
 *   256-session run marked its old generation about every half second (37 mark-compacts in 30 s
 *   against 3) and a packet cycle cost 1.12× the CPU.
 * - `--initial-old-space-size=128`: the old generation's limit starts at 128 MiB and is never set
 *   below it. V8 starts marking when the room under that limit, less the buffers allocated since
 *   the last mark-compact, is under a young generation's worth. With a new buffer per socket read
 *   (35 MB a second at 512 sessions) the process marked 3 times a second once V8 had set the limit
 *   from a 30 MB heap. The sockets now read into buffers of their own (transport's `DirectReads`),
 *   and the floor still pays: at 512 sessions receive delay p99 4.3 and 5.1 ms with it, 7.8 and
 *   32.6 without, for about 37 MiB more RSS.
 */
export const KIT_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16', '--initial-old-space-size=128'];

/** Node flags a child process of the kit starts with to run `module`: the kit's own, and tsx for a `.ts` source. */
export function nodeFlagsFor(module: string): string[] {
  return module.endsWith('.ts') ? [...KIT_NODE_FLAGS, '--import', 'tsx'] : [...KIT_NODE_FLAGS];
}
