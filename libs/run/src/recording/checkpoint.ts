import { rename, writeFile } from 'node:fs/promises';

/**
 * Coalesced writes of one JSON file: at most one write in flight; asks made meanwhile collapse into
 * one more write of the latest snapshot. The snapshot is taken on the loop, the write is async.
 */
export class Checkpoint {
  private writing: Promise<void> | null = null;
  private again = false;
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
    this.writing = this.write().finally(() => {
      this.writing = null;
      if (this.again) {
        this.again = false;
        this.ask();
      }
    });
  }

  /** Waits for writes in flight, then writes the final snapshot. */
  async final(): Promise<void> {
    while (this.writing) await this.writing;
    await this.write();
  }

  private async write(): Promise<void> {
    this.writes++;
    await writeFile(`${this.path}.tmp`, JSON.stringify(this.snapshot(), null, 1));
    await rename(`${this.path}.tmp`, this.path);
  }
}
