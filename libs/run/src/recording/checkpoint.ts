import { rename, rm, writeFile } from 'node:fs/promises';
import { RunFileError } from '@duplex-bench/results';

/**
 * Coalesced writes of one JSON file: at most one write in flight; asks made meanwhile collapse into
 * one more write of the latest snapshot. The snapshot is taken on the loop, the write is async.
 * A failed write is a RunFileError naming the file: an asked-for write's is held in `failed` (never
 * an unhandled rejection); `final` writes the latest snapshot once more and throws if that fails.
 */
export class Checkpoint {
  private writing: Promise<void> | null = null;
  private again = false;
  /** The last asked-for write's failure, until a later write succeeds. */
  failed: Error | null = null;
  writes = 0;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => unknown,
  ) {}

  ask(): void {
    if (this.writing) {
      this.again = true;
      return;
    }
    this.writing = this.write()
      .catch((err: Error) => {
        this.failed = err;
      })
      .finally(() => {
        this.writing = null;
        if (this.again) {
          this.again = false;
          this.ask();
        }
      });
  }

  /** Waits for writes in flight, then writes the final snapshot; a failure throws RunFileError naming the file. */
  async final(): Promise<void> {
    while (this.writing) await this.writing;
    await this.write();
  }

  private async write(): Promise<void> {
    this.writes++;
    const text = JSON.stringify(this.snapshot(), null, 1);
    try {
      await writeFile(`${this.path}.tmp`, text);
      await rename(`${this.path}.tmp`, this.path);
    } catch (err) {
      await rm(`${this.path}.tmp`, { force: true }).catch(() => undefined);
      throw new RunFileError(this.path, `cannot write it: ${(err as Error).message}`);
    }
    this.failed = null;
  }
}
