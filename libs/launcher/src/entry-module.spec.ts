import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryModule, KIT_NODE_FLAGS, nodeFlagsFor } from './entry-module';

const ROOT = join(__dirname, '..', '..', '..');

describe('entryModule', () => {
  it('starts the TypeScript source beside its caller when running from the sources, with tsx', () => {
    // These tests run from the sources (jest): the source module, named from the caller's directory.
    const module = entryModule('/repo/libs/run/src', 'recording/postprocess-worker', 'postprocess-worker');
    expect(module).toBe(join('/repo/libs/run/src', 'recording/postprocess-worker.ts'));
    expect(nodeFlagsFor(module)).toEqual([...KIT_NODE_FLAGS, '--import', 'tsx']);
  });

  it("starts a built module with the kit's flags alone", () => {
    expect(nodeFlagsFor('/pkg/dist/postprocess-worker.js')).toEqual([...KIT_NODE_FLAGS]);
  });
});

describe('KIT_NODE_FLAGS', () => {
  // Node reads V8's heap sizes only at start: every way the kit is started must carry the flags.
  const flags = KIT_NODE_FLAGS.join(' ');

  it("fixes the young generation and floors the old generation's limit", () => {
    expect(KIT_NODE_FLAGS).toContain('--min-semi-space-size=16');
    expect(KIT_NODE_FLAGS).toContain('--initial-old-space-size=128');
  });

  it("are on the executable's first line", () => {
    const first = readFileSync(join(ROOT, 'bin', 'duplex-bench.js'), 'utf8').split('\n')[0];
    expect(first).toBe(`#!/usr/bin/env -S node ${flags}`);
  });

  it("start the image's entry point", () => {
    const entry = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n').find((l) => l.startsWith('ENTRYPOINT'));
    expect(JSON.parse(entry?.slice('ENTRYPOINT'.length) ?? 'null')).toEqual(['node', ...KIT_NODE_FLAGS, '/app/bin/duplex-bench.js']);
  });

  it('start every nx target that runs a command of the kit', () => {
    for (const app of ['probe', 'mock']) {
      const project = JSON.parse(readFileSync(join(ROOT, 'apps', app, 'project.json'), 'utf8')) as { targets: Record<string, { options?: { command?: string } }> };
      const commands = Object.values(project.targets)
        .map((t) => t.options?.command ?? '')
        .filter((c) => c.includes(`apps/${app}/src/main.ts`));
      expect(commands.length).toBeGreaterThan(0);
      for (const command of commands) expect(command.startsWith(`node ${flags} --import tsx`)).toBe(true);
    }
  });
});
