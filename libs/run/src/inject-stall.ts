import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock } from '@duplex-bench/pacer';

/**
 * `--inject-stall-kind`: what holds the loop for `--inject-stall-ms`, so each cause the sampler
 * tells apart can be produced on purpose: `busy` (a spin), `gc` (forced full collections of a
 * large heap, back to back), `disk` (synchronous writes, each flushed to the device with fsync).
 * A CPU that another process takes from the probe is made from outside (a test's hog).
 */
export const STALL_KINDS = ['busy', 'gc', 'disk'] as const;
export type StallKind = (typeof STALL_KINDS)[number];

/**
 * What holds the loop for about `ms` in the way `kind` says, made ready now (before the sessions
 * open: the GC stall's large heap is built here, so the stall itself is collections only); `dir`
 * takes the disk stall's scratch file.
 */
export function prepareStall(kind: StallKind, clock: Clock, dir: string): (ms: number) => void {
  switch (kind) {
    case 'busy':
      return (ms) => {
        const until = clock.now_s() + ms / 1000;
        while (clock.now_s() < until) {
          // Deliberately blocks the loop.
        }
      };
    case 'gc': {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      // A heap of many small live objects makes each full collection long.
      let live: Array<{ a: number; b: string }> | null = [];
      for (let i = 0; i < 2_000_000; i++) live.push({ a: i, b: `x${i & 1023}` });
      return (ms) => {
        const until = clock.now_s() + ms / 1000;
        while (clock.now_s() < until) gc();
        live = null;
      };
    }
    case 'disk':
      return (ms) => {
        const until = clock.now_s() + ms / 1000;
        const file = `${dir}/.stall-${process.pid}.bin`;
        // Small writes, each flushed: the loop waits on the device (state D), not on copying.
        const block = Buffer.alloc(256 << 10, 1);
        const fd = openSync(file, 'w');
        try {
          while (clock.now_s() < until) {
            writeSync(fd, block);
            fsyncSync(fd);
          }
        } finally {
          closeSync(fd);
          unlinkSync(file);
        }
      };
    default: {
      const never: never = kind;
      throw new Error(`unknown stall kind ${String(never)}`);
    }
  }
}
