import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planCpus, readPhysicalCores } from './cpu-plan';

/** A sysfs tree of CPUs, each `[cpu, package, core]`; a CPU with no core is offline (no topology). */
async function sysfs(cpus: Array<[number, number, number | null]>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'sysfs-'));
  for (const [cpu, pkg, core] of cpus) {
    const dir = join(root, `cpu${cpu}`, 'topology');
    await mkdir(dir, { recursive: true });
    if (core === null) continue;
    await writeFile(join(dir, 'physical_package_id'), `${pkg}\n`);
    await writeFile(join(dir, 'core_id'), `${core}\n`);
  }
  await mkdir(join(root, 'cpufreq'), { recursive: true });
  return root;
}

describe('readPhysicalCores', () => {
  it('keeps SMT siblings together, in CPU order, and leaves offline CPUs out', async () => {
    const root = await sysfs([[0, 0, 0], [1, 0, 1], [2, 0, 0], [3, 0, 1], [4, 0, null]]);
    expect(await readPhysicalCores(root)).toEqual([[0, 2], [1, 3]]);
  });

  it('is null where there is no topology to read', async () => {
    expect(await readPhysicalCores(join(tmpdir(), 'no-such-sysfs'))).toBeNull();
  });
});

describe('planCpus', () => {
  it('pins the parent to the first core and each child to one of its own when there are enough', () => {
    expect(planCpus('auto', [[0], [1], [2]], 2)).toMatchObject({ parent: [0], children: [[1], [2]], warning: null });
  });

  it('shares cores round-robin and leaves the parent free when there are too few, and says so', () => {
    const plan = planCpus('auto', [[0], [1]], 3);
    expect(plan).toMatchObject({ parent: null, children: [[0], [1], [0]] });
    expect(plan.warning).toMatch(/3 processes on 2 physical core\(s\)/);
  });

  it('places nothing when off, or with no topology (with a warning)', () => {
    expect(planCpus('off', [[0], [1]], 1)).toMatchObject({ parent: null, children: null, warning: null });
    expect(planCpus('auto', null, 1).warning).toMatch(/no CPU topology/);
  });
});
