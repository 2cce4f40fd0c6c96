import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from './run-command';
import type { RunIo } from '@duplex-bench/cli';
import { parseRunOptions } from './run-options';
import type { RunSummary } from '@duplex-bench/results';

export interface ProbeOutcome {
  code: number;
  stdout: string;
  stderr: string;
  summary: RunSummary;
  dir: string;
}

/** Runs `probe run` in this process against `url` with `flags`; returns its status, output and summary. */
export async function probe(url: string, flags: string[]): Promise<ProbeOutcome> {
  const dir = await mkdtemp(join(tmpdir(), 'probe-run-'));
  let stdout = '';
  let stderr = '';
  const io: RunIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s), isTTY: false },
    signals: new EventEmitter(),
    exitNow: (code) => {
      throw new Error(`exitNow(${code}) in a test`);
    },
    argv: flags,
  };
  const code = await runCommand(parseRunOptions(['--url', url, '--output', dir, '--quiet', ...flags]), io);
  const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
  return { code, stdout, stderr, summary, dir };
}

