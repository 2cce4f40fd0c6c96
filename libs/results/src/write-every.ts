import { appendFile, rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { RunFileError, runFile, type RunFile } from './run-files';

/** One run file to write: its path (for the lines that name it) and the write, whole or not at all. */
export interface RunFileWrite {
  path: string;
  write: () => Promise<void>;
}

/** What a set of writes left: the files written, and each one that could not be, with why. */
export interface WrittenFiles {
  written: string[];
  /** Each file not written, with why, and whether its earlier version is still there, whole (it was renamed over, never cut). */
  failed: Array<{ path: string; message: string; earlier?: boolean }>;
}

/**
 * Tries every write, whatever the others do (a full disk refuses a large file and may still take a
 * small one), and says which files were written and which were not.
 */
export async function writeEvery(writes: RunFileWrite[]): Promise<WrittenFiles> {
  const settled = await Promise.allSettled(writes.map((w) => w.write()));
  const out: WrittenFiles = { written: [], failed: [] };
  for (const [i, s] of settled.entries()) {
    const path = writes[i].path;
    if (s.status === 'fulfilled') out.written.push(path);
    else {
      const err = s.reason as Error;
      // RunFileError says "<path>: <what>"; the line names the path once.
      const message = err instanceof RunFileError && err.message.startsWith(`${path}: `) ? err.message.slice(path.length + 2) : err.message;
      const earlier = await stat(path).then(
        (st) => st.isFile(),
        () => false,
      );
      out.failed.push({ path, message, ...(earlier ? { earlier } : {}) });
    }
  }
  return out;
}

/**
 * One line for the files a run could not write, or null when it wrote them all: each file with its
 * error, then what was kept. "cannot write /r/summary.json (cannot write it: ENOSPC: no space left
 * on device, write); kept run.json, timeline.json".
 */
export function unwrittenLine(w: WrittenFiles, keptBefore: string[] = []): string | null {
  if (w.failed.length === 0) return null;
  const kept = [...keptBefore, ...w.written].map((p) => basename(p));
  for (const f of w.failed) if (f.earlier) kept.push(`${basename(f.path)} as it was before`);
  return `cannot write ${w.failed.map((f) => `${f.path} (${f.message})`).join(', ')}; kept ${kept.length > 0 ? kept.join(', ') : 'no other file'}`;
}

/**
 * Appends to a run file that the run's writer filled as it went (the samples a long run spilled).
 * It cannot be renamed into place, so a failed append removes the file, cut short, and throws
 * RunFileError naming it.
 */
export async function appendRunFile(dir: string, file: RunFile, data: string | Uint8Array): Promise<void> {
  const path = runFile(dir, file);
  try {
    await appendFile(path, data);
  } catch (err) {
    await rm(path, { force: true }).catch(() => undefined);
    throw new RunFileError(path, `cannot write it: ${(err as Error).message}; removed, as it was cut short`);
  }
}
