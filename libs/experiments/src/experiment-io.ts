/** The interrupts a sweep or a comparison listens to while it runs. */
export interface InterruptWatch {
  /** True once the first interrupt came. */
  readonly interrupted: boolean;
  /** Stops listening. */
  dispose(): void;
}

/** What a sweep or a comparison talks to: its progress lines, and the operator's interrupts as the app handles them. */
export interface ExperimentIo {
  stderr: { write(s: string): unknown };
  /** Listens for interrupts: the first says `what` happens now and calls `stop`, which ends the run in progress. */
  interrupts(what: string, stop: () => void): InterruptWatch;
}
