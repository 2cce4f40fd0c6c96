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

/** Node flags a child process needs to run `module`: tsx for a `.ts` source, none for built JavaScript. */
export function nodeFlagsFor(module: string): string[] {
  return module.endsWith('.ts') ? ['--import', 'tsx'] : [];
}
