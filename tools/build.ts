/**
 * Builds dist/: one CommonJS bundle per kind of process the kit starts, for Node 20, each holding
 * our libs (the tsconfig paths) and rxjs, and requiring the other npm packages of package.json's
 * `dependencies`, which an install brings. Every entry is written flat in dist/, so a module that
 * starts another by path finds it beside itself (libs/launcher's `entryModule`; the trace writer's
 * `.js` sibling).
 *
 *   node --import tsx tools/build.ts      (what `npm run build` and `nx run probe:build` run)
 */
import { build, type Metafile, type Plugin } from 'esbuild';
import { copyFile, cp, mkdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';

const ROOT = join(__dirname, '..');
const DIST = join(ROOT, 'dist');

/** dist/<name>.js ← its source, one per process kind. */
export const ENTRIES: Record<string, string> = {
  'duplex-bench': 'apps/probe/src/duplex-bench.ts', // bin/duplex-bench.js: every command
  probe: 'apps/probe/src/main.ts', // the children of `run --processes` and `http --processes`
  'writer-worker': 'libs/tracer/src/writer-worker.ts', // the trace writer's thread
  'postprocess-worker': 'libs/run/src/recording/postprocess-worker.ts', // `record`'s post-processing pool
  'voice-worker': 'libs/audio/src/voice-worker.ts', // a conversation's voice activity thread
  sampler: 'libs/telemetry/src/sampler-main.ts', // `--sampler`: the external /proc sampler, a process of its own
};

/** Files read at run time beside the module that reads them (the report page's scripts). */
const ASSETS = ['libs/report/src/charts.js', 'libs/report/src/report-page.js', 'libs/report/src/behaviour-page.js', 'libs/report/src/http-page.js', 'libs/report/src/sweep-page.js', 'libs/report/src/dashboard-page.js'];

/** Directories read at run time, copied whole beside the bundles: the built-in conversations and their speech. */
const ASSET_DIRS = ['libs/audio/speech'];

/** Every npm package a bundle took in instead of requiring it: each should be a dependency. */
function bundledPackages(meta: Metafile): string[] {
  const names = new Set<string>();
  for (const input of Object.keys(meta.inputs)) {
    const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    if (m) names.add(m[1]);
  }
  return [...names].sort();
}

/**
 * The packages the bundles take in. rxjs's CommonJS build's index requires each of its 223 modules,
 * about 80 ms of a run's start (a `--cpu-prof` of `run`), so its ES module build goes into the
 * bundle, where only the operators our code calls remain (+57 KiB), and tslib's helpers with them.
 */
const BUNDLED = ['rxjs', 'tslib'];
const RXJS_ESM = join(ROOT, 'node_modules/rxjs/dist/esm/index.js');

/**
 * The other npm dependencies stay outside the bundle (an install brings them), marked free of side
 * effects: a module that imports one for a name the bundle never uses does not load it. So
 * `--version` loads no package, and a command loads only the packages its own code calls.
 */
function dependenciesOutside(dependencies: string[]): Plugin {
  const top = (path: string): string => path.split('/').slice(0, path.startsWith('@') ? 2 : 1).join('/');
  return {
    name: 'dependencies-outside',
    setup(b) {
      b.onResolve({ filter: /^rxjs$/ }, () => ({ path: RXJS_ESM }));
      b.onResolve({ filter: /^[^./]/ }, (args) => (dependencies.includes(top(args.path)) ? { path: args.path, external: true, sideEffects: false } : undefined));
    },
  };
}

async function main(): Promise<void> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const dependencies = Object.keys(pkg.dependencies);
  await rm(DIST, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.entries(ENTRIES).map(([out, input]) => ({ in: input, out })),
    outdir: DIST,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    tsconfig: join(ROOT, 'tsconfig.base.json'),
    plugins: [dependenciesOutside(dependencies)],
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
    // `require.main === module` in an entry is how it knows it was started, not required.
    logOverride: { 'commonjs-variable-in-esm': 'silent' },
  });
  const bundled = bundledPackages(result.metafile).filter((name) => !BUNDLED.includes(name));
  if (bundled.length > 0) throw new Error(`bundled npm packages that are not dependencies in package.json: ${bundled.join(', ')}`);
  await mkdir(DIST, { recursive: true });
  for (const asset of ASSETS) await copyFile(join(ROOT, asset), join(DIST, basename(asset)));
  for (const dir of ASSET_DIRS) await cp(join(ROOT, dir), join(DIST, basename(dir)), { recursive: true });
  const sizes = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, o]) => `${basename(file)} ${(o.bytes / 1024).toFixed(0)} KiB`);
  process.stderr.write(`built dist/: ${sizes.join(', ')}; ${ASSETS.length} page scripts and ${ASSET_DIRS.join(', ')} copied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`build failed: ${err.message}\n`);
  process.exit(1);
});
