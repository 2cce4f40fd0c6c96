import { Interrupts, type RunIo } from '@duplex-bench/cli';
import type { ExperimentIo } from '@duplex-bench/experiments';

/** A command's io as a sweep or a comparison sees it: its progress on stderr, the command's interrupts. */
export function experimentIo(io: RunIo): ExperimentIo {
  return { stderr: io.stderr, interrupts: (what, stop) => new Interrupts(io, what, stop) };
}
