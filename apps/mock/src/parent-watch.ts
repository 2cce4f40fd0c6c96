import { nodeTimerHost, type TimerHost } from '@duplex-bench/pacer';

/** How often `serve` looks whether the process that started it is still there, ms. */
export const PARENT_POLL_MS = 200;

/**
 * Calls `gone` once, when this process's parent id changes: the parent ended and the kernel handed
 * this process to init or a subreaper. `npx duplex-bench serve … &` then `kill $!` ends npm's
 * process and not the server it started (issue 26); the server takes that as SIGTERM. The timers
 * are background ones: the watch alone never keeps the process alive. Returns the cancel.
 */
export function watchParent(gone: () => void, timers: TimerHost = nodeTimerHost, ppid: () => number = () => process.ppid, every_ms = PARENT_POLL_MS): () => void {
  const first = ppid();
  let cancel: () => void = () => undefined;
  const look = () => {
    if (ppid() !== first) {
      gone();
      return;
    }
    cancel = timers.arm(every_ms, look, { background: true });
  };
  cancel = timers.arm(every_ms, look, { background: true });
  return () => cancel();
}
