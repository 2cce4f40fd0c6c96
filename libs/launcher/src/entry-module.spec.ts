import { join } from 'node:path';
import { entryModule, nodeFlagsFor } from './entry-module';

describe('entryModule', () => {
  it('starts the TypeScript source beside its caller when running from the sources, with tsx', () => {
    // These tests run from the sources (jest): the source module, named from the caller's directory.
    const module = entryModule('/repo/libs/run/src', 'recording/postprocess-worker', 'postprocess-worker');
    expect(module).toBe(join('/repo/libs/run/src', 'recording/postprocess-worker.ts'));
    expect(nodeFlagsFor(module)).toEqual(['--import', 'tsx']);
  });

  it('needs no flag for a built module', () => {
    expect(nodeFlagsFor('/pkg/dist/postprocess-worker.js')).toEqual([]);
  });
});
