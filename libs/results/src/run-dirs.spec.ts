import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunDirError, runDirsOf, runDirsOfAll } from './run-dirs';

/** A folder tree: each path a file (with its parents made). */
async function tree(files: string[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'run-dirs-'));
  for (const f of files) {
    await mkdir(join(root, f, '..'), { recursive: true });
    await writeFile(join(root, f), '');
  }
  return root;
}

describe('runDirsOf', () => {
  it('is the directory itself when it holds one process’s samples', async () => {
    const root = await tree(['samples.msgpack', 'summary.json', 'run.json']);
    expect(await runDirsOf(root)).toEqual([root]);
  });

  it('descends into the shard-*/ folders that run --shard I/N --output OUT writes, in shard order', async () => {
    const root = await tree(['shard-10/samples.msgpack', 'shard-2/samples.msgpack', 'shard-0/samples.msgpack', 'merged/summary.json', 'notes/samples.msgpack']);
    expect(await runDirsOf(root)).toEqual([join(root, 'shard-0'), join(root, 'shard-2'), join(root, 'shard-10')]);
  });

  it('descends into a launched run’s p*/ children past its pooled summary, and into the p*/ of a shard', async () => {
    const launched = await tree(['summary.json', 'run.json', 'p1/samples.msgpack', 'p0/samples.msgpack']);
    expect(await runDirsOf(launched)).toEqual([join(launched, 'p0'), join(launched, 'p1')]);
    const sharded = await tree(['shard-0/summary.json', 'shard-0/p0/samples.msgpack', 'shard-0/p1/samples.msgpack', 'shard-1/samples.msgpack']);
    expect(await runDirsOf(sharded)).toEqual([join(sharded, 'shard-0', 'p0'), join(sharded, 'shard-0', 'p1'), join(sharded, 'shard-1')]);
  });

  it('takes an http run (summary.json, no samples) as a run', async () => {
    const root = await tree(['summary.json', 'requests.jsonl']);
    expect(await runDirsOf(root)).toEqual([root]);
  });

  it('names what is missing: a folder with no run files and no run folders, one of its shards, or no folder at all', async () => {
    const empty = await tree(['run.json']);
    await expect(runDirsOf(empty)).rejects.toThrow(`${empty} has no samples.msgpack or summary.json and no p*/ or shard-*/ run directories`);
    await expect(runDirsOf(empty)).rejects.toMatchObject({ code: 'RUN_DIR_EMPTY', dir: empty });
    const shardDied = await tree(['shard-0/samples.msgpack', 'shard-1/run.json']);
    await expect(runDirsOf(shardDied)).rejects.toThrow(`${join(shardDied, 'shard-1')} has no samples.msgpack`);
    const missing = join(empty, 'nowhere');
    await expect(runDirsOf(missing)).rejects.toEqual(new RunDirError(`${missing}: no such directory`, 'RUN_DIR_MISSING', missing));
  });

  it('keeps the order of the directories given', async () => {
    const a = await tree(['samples.msgpack']);
    const b = await tree(['shard-1/samples.msgpack', 'shard-0/samples.msgpack']);
    expect(await runDirsOfAll([b, a])).toEqual([join(b, 'shard-0'), join(b, 'shard-1'), a]);
  });
});
