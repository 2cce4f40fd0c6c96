import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, hostname, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { readPhysicalCores } from './cpu-plan';
import { describeHost, physicalCoreCount, projectRevision } from './host';

jest.setTimeout(20_000);

/** A file's trimmed text, or null where it cannot be read (not Linux). */
function procText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

describe('describeHost', () => {
  it("names this host: its name, CPUs, kernel, memory and Node, as the system reports them", async () => {
    const host = await describeHost();
    expect(host).toMatchObject({
      hostname: hostname(),
      cpu_model: cpus()[0]?.model ?? 'unknown',
      logical_cores: availableParallelism(),
      kernel: release(),
      memory_bytes: totalmem(),
      node: process.version,
    });
  });

  it("reads the boot id (whose runs share CLOCK_MONOTONIC) and the kernel's dirty-page expiry, trimmed, or null where they are not readable", async () => {
    const host = await describeHost();
    expect(host.boot_id).toBe(procText('/proc/sys/kernel/random/boot_id'));
    if (host.boot_id !== null) expect(host.boot_id).toMatch(/^[0-9a-f-]{36}$/);
    const expiry = procText('/proc/sys/vm/dirty_expire_centisecs');
    expect(host.vm_dirty_expire_centisecs).toBe(expiry === null ? null : Number(expiry));
  });

  it('counts physical cores as the topology reads them', async () => {
    const cores = await readPhysicalCores();
    expect((await describeHost()).physical_cores).toBe(cores?.length ?? null);
    expect(await physicalCoreCount()).toBe(cores?.length ?? null);
  });
});

describe('projectRevision', () => {
  let dir: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=spec', '-c', 'user.email=spec@example.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' }).trim();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'project-revision-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is null, not a guess, outside a git checkout and in a checkout with no commit yet', async () => {
    expect(await projectRevision(dir)).toEqual({ commit: null, dirty: null });
    git('init', '--quiet');
    expect(await projectRevision(dir)).toEqual({ commit: null, dirty: null });
  });

  it('names the commit checked out, and says whether a tracked file has changed since (untracked files do not count)', async () => {
    git('init', '--quiet');
    await writeFile(join(dir, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('commit', '--quiet', '-m', 'first');
    const head = git('rev-parse', 'HEAD');
    expect(await projectRevision(dir)).toEqual({ commit: head, dirty: false });
    await writeFile(join(dir, 'untracked.txt'), 'new\n');
    expect(await projectRevision(dir)).toEqual({ commit: head, dirty: false });
    await writeFile(join(dir, 'a.txt'), 'two\n');
    expect(await projectRevision(dir)).toEqual({ commit: head, dirty: true });
  });
});
