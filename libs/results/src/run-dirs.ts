import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RUN_FILES } from './run-files';

/** A directory given to `merge` that holds no run: `code` says whether it is missing or holds none. */
export class RunDirError extends Error {
  override readonly name = 'RunDirError';
  constructor(
    message: string,
    readonly code: 'RUN_DIR_MISSING' | 'RUN_DIR_EMPTY',
    readonly dir: string,
  ) {
    super(message);
    this.name = 'RunDirError';
  }
}

/** One process's run (`samples.msgpack`), or an http run (`summary.json`, no samples). */
const MARKS = [RUN_FILES.samples, RUN_FILES.summary];
/** The folders a run writes runs into: `--processes N` (`p0`, `p1`, …) and `--shard I/N` (`shard-0`, …), each a run or a folder of them. */
const PARTS = /^(p|shard-)(\d+)$/;

/**
 * The runs a directory stands for, in order: itself when it is one process's run, else the runs of
 * its `p*`/`shard-*` folders, descended into (a shard of `--processes N` holds `p*` itself). The top
 * of a launched run holds the pooled summary and its children: the children are what a merge pools.
 */
export async function runDirsOf(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new RunDirError(`${dir}: no such directory`, 'RUN_DIR_MISSING', dir);
    throw err;
  }
  const names = new Set(entries.filter((e) => e.isFile()).map((e) => e.name));
  if (names.has(RUN_FILES.samples)) return [dir];
  const parts = entries
    .filter((e) => e.isDirectory() && PARTS.test(e.name))
    .map((e) => ({ name: e.name, m: PARTS.exec(e.name) as RegExpExecArray }))
    .sort((a, b) => a.m[1].localeCompare(b.m[1]) || Number(a.m[2]) - Number(b.m[2]));
  if (parts.length > 0) return (await Promise.all(parts.map((p) => runDirsOf(join(dir, p.name))))).flat();
  if (names.has(RUN_FILES.summary)) return [dir];
  throw new RunDirError(`${dir} has no ${MARKS.join(' or ')} and no p*/ or shard-*/ run directories`, 'RUN_DIR_EMPTY', dir);
}

/** `runDirsOf` of every directory given, in order. */
export async function runDirsOfAll(dirs: string[]): Promise<string[]> {
  return (await Promise.all(dirs.map(runDirsOf))).flat();
}
