#!/usr/bin/env node
// `duplex-bench`: every command of the kit, with its exact exit status (0, 1, 2, 3, 130).
// The TypeScript sources run through tsx, which resolves the workspace's path aliases.
const { join } = require('node:path');
process.env.TSX_TSCONFIG_PATH ??= join(__dirname, '..', 'tsconfig.base.json');
require('tsx/cjs');
require('../apps/probe/src/duplex-bench.ts').main();
