import { join } from 'node:path';

/** The sampler's process entry: its TypeScript source beside this file, or `sampler.js` beside the bundle in dist/. */
export function samplerModule(): string {
  return __filename.endsWith('.ts') ? join(__dirname, 'sampler-main.ts') : join(__dirname, 'sampler.js');
}
