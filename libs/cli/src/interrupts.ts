import { EXIT, type RunIo } from './command-io';

/**
 * SIGINT and SIGTERM for one command: the first says `what` happens now and calls `stop` (the
 * command drains and writes what it has); a second leaves at once with status 130.
 */
export class Interrupts {
  /** True once a first signal came. */
  interrupted = false;
  private readonly handler = (): void => {
    if (this.interrupted) {
      this.io.stderr.write('\nsecond interrupt: leaving now\n');
      this.io.exitNow(EXIT.interrupted);
      return;
    }
    this.interrupted = true;
    this.io.stderr.write(`\ninterrupted: ${this.what} (interrupt again to leave at once)\n`);
    this.stop();
  };

  constructor(
    private readonly io: RunIo,
    private readonly what: string,
    private readonly stop: () => void,
  ) {
    io.signals.on('SIGINT', this.handler);
    io.signals.on('SIGTERM', this.handler);
  }

  dispose(): void {
    this.io.signals.off('SIGINT', this.handler);
    this.io.signals.off('SIGTERM', this.handler);
  }
}
