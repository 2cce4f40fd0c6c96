/**
 * Writes docs/cli.md, the CLI reference, whole (a temporary file renamed over the old page): the
 * `--help` of `duplex-bench` and of each of its commands, as apps/probe/src/cli-reference.ts takes
 * it from the program in this process. apps/probe/src/cli-reference.spec.ts fails when the page
 * and the program's help differ; after changing a flag, run this and commit the page:
 *
 *   node --import tsx tools/cli-reference.ts
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cliReference } from '../apps/probe/src/cli-reference';

const CLI_REFERENCE = join(__dirname, '..', 'docs', 'cli.md');

/** Writes docs/cli.md whole: a temporary file, renamed over the old page. */
export async function writeCliReference(path = CLI_REFERENCE): Promise<void> {
  const text = await cliReference();
  const temporary = `${path}.tmp`;
  try {
    await writeFile(temporary, text);
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

if (require.main === module) {
  writeCliReference().then(
    () => process.stdout.write(`wrote ${CLI_REFERENCE}\n`),
    (err: Error) => {
      process.stderr.write(`cli-reference: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
