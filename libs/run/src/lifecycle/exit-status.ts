import { EXIT } from '@duplex-bench/cli';
import type { RunVerdict } from '../verdict';

/** The exit status of a verdict: 1 failed, 130 interrupted, 3 unqualified (0 with `--allow-unqualified`), else 0. */
export function exitOf(v: RunVerdict, allow_unqualified = false): number {
  switch (v.verdict) {
    case 'failed':
      return EXIT.failed;
    case 'interrupted':
      return EXIT.interrupted;
    case 'unqualified':
      return allow_unqualified ? EXIT.ok : EXIT.unqualified;
    case 'qualified':
      return EXIT.ok;
    default:
      throw new Error(`unknown verdict ${String((v as RunVerdict).verdict)}`);
  }
}

