import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_REFERENCE_COMMAND, cliReference } from './cli-reference';

const CLI_REFERENCE = join(__dirname, '..', '..', '..', 'docs', 'cli.md');

/** The first line where `a` and `b` differ (1-based), with both versions of it. */
function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}: the page has ${JSON.stringify(x[i] ?? '(nothing)')}, the help ${JSON.stringify(y[i] ?? '(nothing)')}`;
  }
  return 'none';
}

describe('docs/cli.md', () => {
  it("is the program's --help as it is now, for duplex-bench and every command", async () => {
    const page = readFileSync(CLI_REFERENCE, 'utf8');
    const help = await cliReference();
    if (page !== help) {
      throw new Error(`docs/cli.md is not the program's --help any more; run \`${CLI_REFERENCE_COMMAND}\` and commit docs/cli.md (first difference at ${firstDifference(page, help)})`);
    }
  });
});
