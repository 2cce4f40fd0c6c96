import { readlinkSync } from 'node:fs';
import { getPriority } from 'node:os';
import { lowerThreadPriority } from './thread-priority';

describe('lowerThreadPriority', () => {
  const linux = process.platform === 'linux';
  (linux ? it : it.skip)("sets the calling thread's nice value and says so", () => {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    const before = getPriority(tid);
    const target = Math.min(19, before + 1);
    expect(lowerThreadPriority(target)).toBe(true);
    expect(getPriority(tid)).toBe(target);
  });
});
