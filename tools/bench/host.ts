import * as fs from 'node:fs';
import * as os from 'node:os';
import { runQuiet } from './processes';

export interface HostInfo {
  cpu_model: string;
  logical_cores: number;
  kernel: string;
  node: string;
  python?: string;
  commit: string;
  dirty: boolean;
  open_files_limit?: number;
}

/** The first interpreter that can import websockets (pyenv's python3 often cannot; Debian's can). */
export function findPython(explicit: string | undefined): string | undefined {
  const candidates = explicit ? [explicit] : ['python3', '/usr/bin/python3'];
  return candidates.find((bin) => runQuiet(bin, ['-c', 'import websockets']) !== undefined);
}

function openFilesLimit(): number | undefined {
  const line = fs
    .readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
}

export function hostInfo(python_bin: string | undefined): HostInfo {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    logical_cores: cpus.length,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    python: python_bin ? runQuiet(python_bin, ['--version']) : undefined,
    commit: runQuiet('git', ['rev-parse', '--short', 'HEAD']) ?? 'unknown',
    dirty: (runQuiet('git', ['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
    open_files_limit: openFilesLimit(),
  };
}

export function hostLine(host: HostInfo): string {
  const python = host.python ? `, ${host.python}` : '';
  const dirty = host.dirty ? ' (dirty tree)' : '';
  return `${host.cpu_model}, ${host.logical_cores} logical cores, ${host.kernel}, Node ${host.node}${python}, commit ${host.commit}${dirty}`;
}

