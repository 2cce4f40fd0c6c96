import { readdir, readFile } from 'node:fs/promises';

export interface CpuPlan {
  mode: 'auto' | 'off';
  /** Physical cores, each the list of its logical CPUs (SMT siblings together). */
  cores: number[][];
  parent: number[] | null;
  children: number[][] | null;
  warning: string | null;
}

/** Physical cores from sysfs topology, SMT siblings kept together; null where sysfs is unreadable. */
export async function readPhysicalCores(sysfs = '/sys/devices/system/cpu'): Promise<number[][] | null> {
  let names: string[];
  try {
    names = (await readdir(sysfs)).filter((e) => /^cpu\d+$/.test(e));
  } catch {
    return null;
  }
  const byCore = new Map<string, number[]>();
  for (const name of names) {
    const cpu = Number(name.slice(3));
    try {
      const pkg = (await readFile(`${sysfs}/${name}/topology/physical_package_id`, 'utf8')).trim();
      const core = (await readFile(`${sysfs}/${name}/topology/core_id`, 'utf8')).trim();
      const key = `${pkg}:${core}`;
      byCore.set(key, [...(byCore.get(key) ?? []), cpu]);
    } catch {
      continue; // offline CPU: no topology
    }
  }
  if (byCore.size === 0) return null;
  return [...byCore.values()].map((cpus) => cpus.sort((a, b) => a - b)).sort((a, b) => a[0] - b[0]);
}

/**
 * Where the launcher and its children run: the parent on the first core, each child on cores of its
 * own, when there are enough; otherwise children share cores round-robin and the parent is left free.
 */
export function planCpus(mode: 'auto' | 'off', cores: number[][] | null, children: number): CpuPlan {
  if (mode === 'off') return { mode, cores: cores ?? [], parent: null, children: null, warning: null };
  if (!cores || cores.length === 0) {
    return { mode, cores: [], parent: null, children: null, warning: 'CPU placement skipped: no CPU topology here (not Linux?)' };
  }
  if (cores.length >= children + 1) {
    return { mode, cores, parent: cores[0], children: Array.from({ length: children }, (_, i) => cores[i + 1]), warning: null };
  }
  return {
    mode,
    cores,
    parent: null,
    children: Array.from({ length: children }, (_, i) => cores[i % cores.length]),
    warning: `${children} processes on ${cores.length} physical core(s): children share cores, the launcher is not pinned`,
  };
}
