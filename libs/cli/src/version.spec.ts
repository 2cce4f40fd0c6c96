import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from './version';

describe('VERSION', () => {
  it("is the version of the kit's package.json, at the repository root when run from the sources", () => {
    const root = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { name: string; version: string };
    expect(root.name).toBe('duplex-bench');
    expect(VERSION).toBe(root.version);
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
  });
});
