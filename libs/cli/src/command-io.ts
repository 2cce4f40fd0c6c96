/** Exit status of every command: 0 done, 1 failed, 2 bad input, 3 pacing unqualified, 130 interrupted. */
export const EXIT = { ok: 0, failed: 1, usage: 2, unqualified: 3, slo_failed: 4, interrupted: 130 } as const;

/** What a command talks to: streams and the process's signals, so tests can drive it. */
export interface RunIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  signals: { on(signal: 'SIGINT' | 'SIGTERM', fn: () => void): unknown; off(signal: 'SIGINT' | 'SIGTERM', fn: () => void): unknown };
  /** Leaves at once on a second interrupt. */
  exitNow(code: number): void;
  argv: string[];
  /** The arguments as the user typed them, when `argv` was trimmed for the command (`--report` taken off): what run.json records. */
  typed?: string[];
  /** With `--json`: takes the command's final summary, written as one JSON line on stdout. */
  emit?(summary: unknown): void;
  /** `--dashboard-port`: the live dashboard's page in the report's look (the app renders it; a lib without one serves a plain page). */
  dashboardPage?(title: string): Promise<string>;
}
