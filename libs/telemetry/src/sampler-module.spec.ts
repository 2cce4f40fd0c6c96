import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileFunction } from 'node:vm';
import { transpileModule, ModuleKind } from 'typescript';
import { samplerModule } from './sampler-module';

/** sampler-module.ts loaded as if it were the file at `filename` (a bundle in dist/, say): its location is the edge. */
function samplerModuleAt(filename: string): string {
  const { outputText } = transpileModule(readFileSync(join(__dirname, 'sampler-module.ts'), 'utf8'), { compilerOptions: { module: ModuleKind.CommonJS } });
  const module = { exports: {} as { samplerModule?: () => string } };
  compileFunction(outputText, ['exports', 'require', 'module', '__filename', '__dirname'])(module.exports, require, module, filename, dirname(filename));
  if (!module.exports.samplerModule) throw new Error('no samplerModule');
  return module.exports.samplerModule();
}

describe('samplerModule', () => {
  it("names the sampler's TypeScript entry beside this source when running from source, and that file is there", () => {
    const entry = samplerModule();
    expect(entry).toBe(join(__dirname, 'sampler-main.ts'));
    expect(existsSync(entry)).toBe(true);
  });

  it('names sampler.js beside the bundle when running from dist/', () => {
    expect(samplerModuleAt('/opt/duplex-bench/dist/duplex-bench.js')).toBe('/opt/duplex-bench/dist/sampler.js');
    expect(samplerModuleAt('/src/libs/telemetry/src/sampler-module.ts')).toBe('/src/libs/telemetry/src/sampler-main.ts');
  });
});
