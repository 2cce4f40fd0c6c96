import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand, type RunHooks } from './run-command';
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

/**
 * Runs `probe run` in this process against `url` with `flags`; returns its status, output and summary.
 * The cadence is judged only where a test asks (`'judged'`, the `*.alone.e2e.ts` files that run with
 * nothing beside them): elsewhere two test files share the cores, so the run gets
 * `--allow-unqualified` and a late packet cannot fail a test about a dialect (a failed session still
 * exits 1).
 */
export async function probe(url: string, flags: string[], cadence: 'judged' | 'not judged' = 'not judged'): Promise<ProbeOutcome> {
  if (cadence === 'not judged' && !flags.includes('--allow-unqualified')) flags = [...flags, '--allow-unqualified'];
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


/**
 * Runs `probe run` in this process against `url` with the run's hooks (a writer slowed or killed),
 * after `prepare` had the output directory; returns its status, stderr, summary and directory.
 */
export async function probeWithHooks(url: string, flags: string[], hooks: RunHooks, prepare?: (dir: string) => Promise<void>): Promise<Omit<ProbeOutcome, 'stdout'>> {
  const dir = await mkdtemp(join(tmpdir(), 'probe-hooks-'));
  await prepare?.(dir);
  let stderr = '';
  const io: RunIo = {
    stdout: { write: () => true },
    stderr: { write: (s: string) => (stderr += s) },
    signals: new EventEmitter(),
    exitNow: () => undefined,
    argv: flags,
  };
  const code = await runCommand(parseRunOptions(['--url', url, '--output', dir, '--quiet', ...flags]), io, undefined, hooks);
  const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
  return { code, stderr, summary, dir };
}
