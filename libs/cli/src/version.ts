import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The kit's version: the workspace's package.json, read once. */
export const VERSION: string = (JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
