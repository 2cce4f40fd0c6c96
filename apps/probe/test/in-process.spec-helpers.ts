import { EventEmitter } from 'node:events';
import type { RunIo } from '@duplex-bench/cli';
import { main } from '../src/main';

/** Runs one probe command line in this process, as its CLI would; returns its status and what it wrote. */
export async function probe(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: RunIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    signals: new EventEmitter(),
    exitNow: (code) => {
      throw new Error(`exitNow(${code}) in a test`);
    },
    argv: argv.slice(1),
  };
  return { code: await main(argv, io), stdout, stderr };
}
