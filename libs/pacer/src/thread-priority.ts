import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers the calling thread's priority to `nice` (Linux: setpriority on the thread id), so that on a
 * busy host the pacing loop wins the CPU over the background thread that calls this (the trace
 * writer, the voice activity thread). Returns whether it was set: elsewhere, or where not permitted,
 * the thread runs at the loop's priority.
 */
export function lowerThreadPriority(nice: number): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid)) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
