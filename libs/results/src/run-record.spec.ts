import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunRecord, writeRunRecord, type RunRecord } from './run-record';

describe('run.json, one record for every kind of run', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'run-record-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const record: RunRecord = { command: ['duplex-bench', 'run'], protocol: 'vllm-omni', host: { boot_id: 'b-1' }, project: { revision: 'abc' }, gate_s: 12.5, gate_clock: { monotonic_s: 12.4, epoch_ms: 1_000 } };

  it('reads back what it wrote, indented for a person, and leaves no temporary file beside it', async () => {
    await writeRunRecord(dir, record);
    expect(await readRunRecord(dir)).toEqual(record);
    expect(await readFile(join(dir, 'run.json'), 'utf8')).toBe(JSON.stringify(record, null, 1));
    expect(await readdir(dir)).toEqual(['run.json']);
  });

  it('replaces an earlier record whole', async () => {
    await writeRunRecord(dir, { ...record, ended_s: null });
    await writeRunRecord(dir, { ...record, ended_s: 40 });
    expect((await readRunRecord(dir))?.ended_s).toBe(40);
  });

  it("is null for a directory without one; one cut short is named, with the parser's place", async () => {
    expect(await readRunRecord(dir)).toBeNull();
    await writeFile(join(dir, 'run.json'), '{"command": [');
    const err = await readRunRecord(dir).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${join(dir, 'run.json')}: not valid JSON \\(.+\\); the file may be cut short$`));
  });
});
