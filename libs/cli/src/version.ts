import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The package's root: three levels above libs/cli/src in the sources, one above dist/ when built. */
const ROOT = __filename.endsWith('.ts') ? join(__dirname, '..', '..', '..') : join(__dirname, '..');

/** The kit's version: the package's package.json, read once. */
export const VERSION: string = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
