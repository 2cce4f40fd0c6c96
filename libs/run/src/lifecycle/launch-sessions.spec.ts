import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processStalls } from './launch-sessions';

describe("processStalls: each process's stall account, from its summary", () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'launch-stalls-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const child = async (name: string, summary: string) => {
    await mkdir(join(dir, name));
    await writeFile(join(dir, name, 'summary.json'), summary);
    return join(dir, name);
  };

  it('reads each process directory by its name', async () => {
    const stalls = { count: 1 };
    const dirs = [await child('p0', JSON.stringify({ stalls })), await child('p1', '{}')];
    expect(await processStalls(dirs)).toEqual([
      { process: 'p0', stalls },
      { process: 'p1', stalls: undefined },
    ]);
  });

  it("names a summary cut short, with the parser's place", async () => {
    const dirs = [await child('p0', '{}'), await child('p1', '{"stalls":{"cou')];
    const err = await processStalls(dirs).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${join(dir, 'p1', 'summary.json')}: not valid JSON \\(.+\\); the file may be cut short$`));
  });
});
