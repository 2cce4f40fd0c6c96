#!/usr/bin/env -S node --min-semi-space-size=16 --initial-old-space-size=128
// `duplex-bench`: every command of the kit, with its exact exit status (0, 1, 2, 3, 130).
// It runs the compiled JavaScript in dist/ (`npm run build`); inside a checkout that has no dist/
// yet it builds it first (the build's own lines go to stderr, so stdout stays the command's).
// The first line's Node flags are the kit's (KIT_NODE_FLAGS in libs/launcher): `node bin/duplex-bench.js`
// without them runs the same commands, with V8's own sizing of the young generation.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const entry = join(root, 'dist', 'duplex-bench.js');
const build = join(root, 'tools', 'build.ts');
if (!existsSync(entry) && existsSync(build)) {
  const { status } = require('node:child_process').spawnSync(process.execPath, ['--import', 'tsx', build], { cwd: root, stdio: ['ignore', 2, 2] });
  if (status !== 0) process.exit(1);
}
require(entry).main();
