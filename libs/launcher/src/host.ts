import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { readPhysicalCores } from './cpu-plan';
import { cpus, release, totalmem, hostname, availableParallelism } from 'node:os';

export interface HostInfo {
  hostname: string;
  /** The kernel's boot id: runs with the same one share CLOCK_MONOTONIC (null where it cannot be read). */
  boot_id: string | null;
  cpu_model: string;
  logical_cores: number;
  /** Distinct (package, core) pairs in sysfs; null where sysfs is not readable. */
  physical_cores: number | null;
  kernel: string;
  memory_bytes: number;
  vm_dirty_expire_centisecs: number | null;
  node: string;
}

async function readNumber(path: string): Promise<number | null> {
  try {
    const value = Number((await readFile(path, 'utf8')).trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    return null; // not Linux, or not readable here: reported as unknown
  }
}

/** Physical cores (SMT siblings counted once); null where sysfs is not readable. */
export async function physicalCoreCount(): Promise<number | null> {
  return (await readPhysicalCores())?.length ?? null;
}

export async function describeHost(): Promise<HostInfo> {
  return {
    hostname: hostname(),
    boot_id: await readFile('/proc/sys/kernel/random/boot_id', 'utf8').then((t) => t.trim(), () => null),
    cpu_model: cpus()[0]?.model ?? 'unknown',
    logical_cores: availableParallelism(),
    physical_cores: await physicalCoreCount(),
    kernel: release(),
    memory_bytes: totalmem(),
    vm_dirty_expire_centisecs: await readNumber('/proc/sys/vm/dirty_expire_centisecs'),
    node: process.version,
  };
}

export interface ProjectRevision {
  commit: string | null;
  dirty: boolean | null;
}

function git(args: string[], cwd: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, timeout: 5000 }, (err, stdout) => resolve(err ? null : stdout.trim()));
  });
}

/** The commit of the checkout at `cwd` and whether it has changes; nulls outside a git checkout. */
export async function projectRevision(cwd: string): Promise<ProjectRevision> {
  const commit = await git(['rev-parse', 'HEAD'], cwd);
  if (commit === null) return { commit: null, dirty: null };
  const status = await git(['status', '--porcelain', '--untracked-files=no'], cwd);
  return { commit, dirty: status === null ? null : status.length > 0 };
}
